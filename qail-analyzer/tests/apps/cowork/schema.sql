-- A coworking operator: cities, locations and their spaces, member companies, plans and
-- memberships, reservations and check-ins, community events, support, and billing in its
-- own schema. Written for the analyzer's real-application suite.

CREATE SCHEMA billing;

CREATE TYPE member_status AS ENUM ('prospect', 'active', 'paused', 'left');
CREATE TYPE space_kind AS ENUM ('hot_desk', 'fixed_desk', 'office', 'meeting_room', 'phone_booth');
CREATE TYPE reservation_state AS ENUM ('held', 'confirmed', 'checked_in', 'no_show', 'cancelled');
CREATE TYPE weekday AS ENUM ('mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun');
CREATE TYPE billing.invoice_state AS ENUM ('draft', 'open', 'paid', 'void');

CREATE DOMAIN email AS text CHECK (VALUE ~ '^[^@ ]+@[^@ ]+$');
CREATE DOMAIN money_amount AS numeric(12, 2) CHECK (VALUE >= 0);
CREATE DOMAIN seat_count AS int2 NOT NULL CHECK (VALUE > 0);

CREATE TYPE geo_point AS (lat float8, lon float8);

CREATE TABLE cities (
    id int4 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text NOT NULL,
    country char(2) NOT NULL,
    timezone text NOT NULL
);

CREATE TABLE locations (
    id int4 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    city_id int4 NOT NULL REFERENCES cities (id),
    name text NOT NULL,
    street text NOT NULL,
    position geo_point,
    opened_on date NOT NULL,
    closed_on date,
    amenities text[] NOT NULL DEFAULT '{}'
);

CREATE TABLE opening_hours (
    location_id int4 NOT NULL REFERENCES locations (id),
    day weekday NOT NULL,
    opens time NOT NULL,
    closes time NOT NULL,
    PRIMARY KEY (location_id, day)
);

CREATE TABLE spaces (
    id int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    location_id int4 NOT NULL REFERENCES locations (id),
    kind space_kind NOT NULL,
    label text NOT NULL,
    seats seat_count,
    hourly_rate money_amount,
    features jsonb NOT NULL DEFAULT '{}',
    retired_at timestamptz,
    UNIQUE (location_id, label)
);

CREATE TABLE plans (
    id int4 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    code text NOT NULL UNIQUE,
    name text NOT NULL,
    monthly_fee money_amount NOT NULL,
    included_hours int4 NOT NULL DEFAULT 0,
    kinds space_kind[] NOT NULL,
    active bool NOT NULL DEFAULT true
);

CREATE TABLE companies (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name text NOT NULL,
    vat_number text UNIQUE,
    billing_email email,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE members (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    company_id uuid REFERENCES companies (id),
    email email NOT NULL UNIQUE,
    full_name text NOT NULL,
    phone text,
    status member_status NOT NULL DEFAULT 'prospect',
    home_location_id int4 REFERENCES locations (id),
    joined_at timestamptz NOT NULL DEFAULT now(),
    left_at timestamptz,
    tags text[] NOT NULL DEFAULT '{}',
    profile jsonb
);

CREATE INDEX members_active_by_location ON members (home_location_id) WHERE status = 'active';

CREATE TABLE memberships (
    id int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    member_id uuid NOT NULL REFERENCES members (id),
    plan_id int4 NOT NULL REFERENCES plans (id),
    valid daterange NOT NULL,
    discount_pct numeric(5, 2),
    cancelled_at timestamptz
);

CREATE TABLE reservations (
    id int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    space_id int8 NOT NULL REFERENCES spaces (id),
    member_id uuid NOT NULL REFERENCES members (id),
    starts_at timestamptz NOT NULL,
    ends_at timestamptz NOT NULL,
    state reservation_state NOT NULL DEFAULT 'held',
    guests int2 NOT NULL DEFAULT 0,
    note text,
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK (ends_at > starts_at)
);

CREATE INDEX reservations_live ON reservations (space_id, starts_at)
    WHERE state IN ('held', 'confirmed');

CREATE TABLE check_ins (
    id int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    member_id uuid NOT NULL REFERENCES members (id),
    location_id int4 NOT NULL REFERENCES locations (id),
    reservation_id int8 REFERENCES reservations (id),
    arrived_at timestamptz NOT NULL DEFAULT now(),
    left_at timestamptz
);

CREATE INDEX check_ins_open ON check_ins (location_id) WHERE left_at IS NULL;

CREATE TABLE events (
    id int4 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    location_id int4 NOT NULL REFERENCES locations (id),
    title text NOT NULL,
    starts_at timestamptz NOT NULL,
    capacity int4,
    price money_amount,
    host_member_id uuid REFERENCES members (id)
);

CREATE TABLE event_signups (
    event_id int4 NOT NULL REFERENCES events (id),
    member_id uuid NOT NULL REFERENCES members (id),
    signed_up_at timestamptz NOT NULL DEFAULT now(),
    attended bool,
    PRIMARY KEY (event_id, member_id)
);

CREATE TABLE guest_passes (
    code text PRIMARY KEY,
    issued_by uuid NOT NULL REFERENCES members (id),
    guest_name text NOT NULL,
    valid_on date NOT NULL,
    used_at timestamptz
);

CREATE TABLE support_tickets (
    id int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    member_id uuid REFERENCES members (id),
    location_id int4 REFERENCES locations (id),
    subject text NOT NULL,
    body text NOT NULL,
    priority int2 NOT NULL DEFAULT 3,
    opened_at timestamptz NOT NULL DEFAULT now(),
    closed_at timestamptz,
    labels text[] NOT NULL DEFAULT '{}'
);

CREATE INDEX support_tickets_open ON support_tickets (priority, opened_at) WHERE closed_at IS NULL;

CREATE TABLE audit_events (
    id int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    actor uuid,
    action text NOT NULL,
    subject text NOT NULL,
    payload jsonb NOT NULL DEFAULT '{}',
    at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE billing.invoices (
    id int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    company_id uuid REFERENCES companies (id),
    member_id uuid REFERENCES members (id),
    number text NOT NULL UNIQUE,
    state billing.invoice_state NOT NULL DEFAULT 'draft',
    issued_on date,
    due_on date,
    total money_amount NOT NULL DEFAULT 0,
    currency char(3) NOT NULL DEFAULT 'EUR',
    CHECK (company_id IS NOT NULL OR member_id IS NOT NULL)
);

CREATE INDEX invoices_unpaid ON billing.invoices (due_on) WHERE state = 'open';

CREATE TABLE billing.invoice_lines (
    invoice_id int8 NOT NULL REFERENCES billing.invoices (id) ON DELETE CASCADE,
    line_no int2 NOT NULL,
    description text NOT NULL,
    quantity numeric(10, 2) NOT NULL,
    unit_price money_amount NOT NULL,
    reservation_id int8 REFERENCES reservations (id),
    PRIMARY KEY (invoice_id, line_no)
);

CREATE TABLE billing.payments (
    id int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    invoice_id int8 NOT NULL REFERENCES billing.invoices (id),
    amount money_amount NOT NULL,
    method text NOT NULL,
    paid_at timestamptz NOT NULL DEFAULT now(),
    external_ref text UNIQUE
);

CREATE VIEW active_members AS
SELECT m.id, m.full_name, m.email, c.name AS company, m.home_location_id
FROM members m
LEFT JOIN companies c ON c.id = m.company_id
WHERE m.status = 'active';

CREATE VIEW space_utilisation AS
SELECT s.id AS space_id, s.label, s.location_id, count(r.id) AS reservations,
       sum(r.ends_at - r.starts_at) AS booked
FROM spaces s
LEFT JOIN reservations r ON r.space_id = s.id AND r.state IN ('confirmed', 'checked_in')
GROUP BY s.id;

CREATE FUNCTION hours_between(from_ts timestamptz, to_ts timestamptz) RETURNS numeric
    LANGUAGE sql IMMUTABLE STRICT
    AS $$ SELECT round(extract(epoch FROM to_ts - from_ts) / 3600, 2) $$;

CREATE FUNCTION space_is_free(space int8, from_ts timestamptz, to_ts timestamptz) RETURNS bool
    LANGUAGE sql STABLE
    AS $$
        SELECT NOT EXISTS (
            SELECT 1 FROM reservations r
            WHERE r.space_id = space AND r.state IN ('held', 'confirmed')
              AND tstzrange(r.starts_at, r.ends_at) && tstzrange(from_ts, to_ts))
    $$;

CREATE FUNCTION free_spaces(loc int4, from_ts timestamptz, to_ts timestamptz)
    RETURNS TABLE (space_id int8, label text, kind space_kind, seats int2)
    LANGUAGE sql STABLE
    AS $$
        SELECT s.id, s.label, s.kind, s.seats FROM spaces s
        WHERE s.location_id = loc AND s.retired_at IS NULL AND space_is_free(s.id, from_ts, to_ts)
    $$;

CREATE FUNCTION invoice_number(year int4, seq int8) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    AS $$ SELECT format('INV-%s-%s', year, lpad(seq::text, 6, '0')) $$;

CREATE FUNCTION busiest_hours(loc int4, since date DEFAULT current_date - 30)
    RETURNS TABLE (hour int4, visits int8)
    LANGUAGE sql STABLE
    AS $$
        SELECT extract(hour FROM arrived_at)::int4, count(*) FROM check_ins
        WHERE location_id = loc AND arrived_at >= since
        GROUP BY 1 ORDER BY 2 DESC
    $$;

CREATE FUNCTION member_ids_with_tag(tag text) RETURNS SETOF uuid
    LANGUAGE sql STABLE STRICT
    AS $$ SELECT id FROM members WHERE tag = ANY (tags) $$;
