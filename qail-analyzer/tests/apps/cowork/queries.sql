-- Members and companies ------------------------------------------------------------------

SELECT id, full_name, email, status, joined_at
FROM members
WHERE status = $1
ORDER BY joined_at DESC, id
LIMIT $2 OFFSET $3;

-- keyset pagination over members by (joined_at, id)
SELECT id, full_name, joined_at
FROM members
WHERE (joined_at, id) < ($1, $2)
ORDER BY joined_at DESC, id DESC
LIMIT 50;

SELECT m.id, m.full_name, c.name AS company, l.name AS home
FROM members m
LEFT JOIN companies c ON c.id = m.company_id
LEFT JOIN locations l ON l.id = m.home_location_id
WHERE m.email = $1;

SELECT id, full_name FROM members WHERE lower(full_name) LIKE '%' || lower($1) || '%' ORDER BY full_name LIMIT 20;

SELECT id, full_name, tags FROM members WHERE tags && $1::text[] AND status <> 'left';

SELECT id, full_name, profile ->> 'linkedin' AS linkedin, (profile -> 'skills') AS skills
FROM members
WHERE profile ? 'linkedin';

INSERT INTO members (company_id, email, full_name, phone, home_location_id)
VALUES ($1, $2, $3, $4, $5)
RETURNING id, status, joined_at;

INSERT INTO companies (name, vat_number, billing_email)
VALUES ($1, $2, $3)
ON CONFLICT (vat_number) DO UPDATE SET name = EXCLUDED.name, billing_email = coalesce(EXCLUDED.billing_email, companies.billing_email)
RETURNING id, (xmax = 0) AS inserted;

UPDATE members SET status = 'left', left_at = now() WHERE id = $1 AND status <> 'left' RETURNING left_at;

UPDATE members SET tags = array_append(tags, $2) WHERE id = $1 AND NOT ($2 = ANY (tags));

UPDATE members m SET home_location_id = l.id
FROM locations l
WHERE l.name = $2 AND m.id = $1
RETURNING m.id, l.name;

SELECT c.name, count(m.id) AS members, count(m.id) FILTER (WHERE m.status = 'active') AS active
FROM companies c
LEFT JOIN members m ON m.company_id = c.id
GROUP BY c.id
ORDER BY members DESC;

SELECT id, full_name, company FROM active_members WHERE home_location_id = $1;

-- Locations and spaces --------------------------------------------------------------------

SELECT l.id, l.name, ci.name AS city, ci.timezone, (l.position).lat, (l.position).lon, cardinality(l.amenities) AS amenity_count
FROM locations l
JOIN cities ci ON ci.id = l.city_id
WHERE l.closed_on IS NULL OR l.closed_on > current_date;

SELECT day, opens, closes, closes - opens AS open_for FROM opening_hours WHERE location_id = $1 ORDER BY day;

SELECT s.id, s.label, s.kind, s.seats, s.hourly_rate, s.features -> 'screens' AS screens
FROM spaces s
WHERE s.location_id = $1 AND s.kind = ANY ($2) AND s.retired_at IS NULL
ORDER BY s.kind, s.label;

SELECT kind, count(*) AS spaces, sum(seats) AS seats, avg(hourly_rate) AS mean_rate
FROM spaces
WHERE retired_at IS NULL
GROUP BY kind;

SELECT space_id, label, kind, seats FROM free_spaces($1, $2, $3) ORDER BY seats DESC;

SELECT f.label, s.hourly_rate, hours_between($2, $3) * s.hourly_rate AS quote
FROM free_spaces($1, $2, $3) f
JOIN spaces s ON s.id = f.space_id;

SELECT space_is_free($1, $2, $3) AS free;

INSERT INTO spaces (location_id, kind, label, seats, hourly_rate, features)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (location_id, label) DO UPDATE SET seats = EXCLUDED.seats, hourly_rate = EXCLUDED.hourly_rate, retired_at = NULL
RETURNING id;

UPDATE spaces SET features = jsonb_set(features, '{screens}', to_jsonb($2::int4)) WHERE id = $1 RETURNING features;

SELECT space_id, label, reservations, booked, extract(epoch FROM booked) / 3600 AS hours
FROM space_utilisation
WHERE location_id = $1
ORDER BY booked DESC NULLS LAST;

-- Reservations -----------------------------------------------------------------------------

INSERT INTO reservations (space_id, member_id, starts_at, ends_at, guests, note)
SELECT $1, $2, $3, $4, $5, $6
WHERE space_is_free($1, $3, $4)
RETURNING id, state, created_at;

UPDATE reservations SET state = 'confirmed' WHERE id = $1 AND state = 'held' RETURNING id, starts_at, ends_at;

SELECT r.id, r.starts_at, r.ends_at, r.state, s.label, l.name AS location
FROM reservations r
JOIN spaces s ON s.id = r.space_id
JOIN locations l ON l.id = s.location_id
WHERE r.member_id = $1 AND r.starts_at >= now()
ORDER BY r.starts_at;

SELECT r.id, m.full_name, r.starts_at AT TIME ZONE ci.timezone AS local_start, hours_between(r.starts_at, r.ends_at) AS hours
FROM reservations r
JOIN members m ON m.id = r.member_id
JOIN spaces s ON s.id = r.space_id
JOIN locations l ON l.id = s.location_id
JOIN cities ci ON ci.id = l.city_id
WHERE s.location_id = $1 AND r.starts_at::date = $2;

-- no-shows: confirmed reservations that ended without a check-in
WITH missed AS (
    UPDATE reservations r SET state = 'no_show'
    WHERE r.state = 'confirmed' AND r.ends_at < now()
      AND NOT EXISTS (SELECT 1 FROM check_ins c WHERE c.reservation_id = r.id)
    RETURNING r.id, r.member_id
)
INSERT INTO audit_events (actor, action, subject, payload)
SELECT NULL, 'no_show', 'reservation', jsonb_build_object('reservation', id, 'member', member_id)
FROM missed
RETURNING id;

SELECT date_trunc('week', starts_at) AS week, count(*) AS bookings, count(DISTINCT member_id) AS members,
       sum(ends_at - starts_at) AS booked
FROM reservations
WHERE state IN ('confirmed', 'checked_in') AND starts_at >= $1
GROUP BY 1
ORDER BY 1;

SELECT s.kind, extract(isodow FROM r.starts_at) AS dow, count(*) AS n
FROM reservations r JOIN spaces s ON s.id = r.space_id
GROUP BY ROLLUP (s.kind, extract(isodow FROM r.starts_at))
ORDER BY 1, 2;

SELECT member_id, count(*) AS n,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY ends_at - starts_at) AS median_length,
       max(ends_at - starts_at) AS longest
FROM reservations
GROUP BY member_id
HAVING count(*) >= $1;

SELECT id, starts_at,
       starts_at - lag(ends_at) OVER (PARTITION BY space_id ORDER BY starts_at) AS gap_before,
       row_number() OVER (PARTITION BY space_id ORDER BY starts_at) AS nth
FROM reservations
WHERE space_id = $1;

DELETE FROM reservations WHERE state = 'held' AND created_at < now() - interval '15 minutes' RETURNING id, member_id;

-- Check-ins ----------------------------------------------------------------------------------

INSERT INTO check_ins (member_id, location_id, reservation_id) VALUES ($1, $2, $3) RETURNING id, arrived_at;

UPDATE check_ins SET left_at = now() WHERE member_id = $1 AND left_at IS NULL RETURNING arrived_at, left_at - arrived_at AS stayed;

SELECT l.name, count(c.id) AS present
FROM locations l
LEFT JOIN check_ins c ON c.location_id = l.id AND c.left_at IS NULL
GROUP BY l.id
ORDER BY present DESC;

SELECT hour, visits FROM busiest_hours($1) LIMIT 5;

SELECT b.hour, b.visits, round(100.0 * b.visits / sum(b.visits) OVER (), 1) AS pct FROM busiest_hours($1, $2) b;

SELECT m.full_name, max(c.arrived_at) AS last_seen, count(*) AS visits
FROM check_ins c JOIN members m ON m.id = c.member_id
WHERE c.arrived_at >= now() - make_interval(days => $1)
GROUP BY m.id
ORDER BY visits DESC
LIMIT 10;

-- Plans and memberships ------------------------------------------------------------------------

SELECT p.code, p.name, p.monthly_fee, p.kinds, count(ms.id) FILTER (WHERE ms.valid @> current_date) AS current_members
FROM plans p
LEFT JOIN memberships ms ON ms.plan_id = p.id
WHERE p.active
GROUP BY p.id
ORDER BY p.monthly_fee;

SELECT ms.id, p.name, lower(ms.valid) AS starts, upper(ms.valid) AS ends, p.monthly_fee * (1 - coalesce(ms.discount_pct, 0) / 100) AS fee
FROM memberships ms JOIN plans p ON p.id = ms.plan_id
WHERE ms.member_id = $1 AND ms.cancelled_at IS NULL
ORDER BY lower(ms.valid) DESC;

INSERT INTO memberships (member_id, plan_id, valid, discount_pct)
VALUES ($1, $2, daterange($3, $4), $5)
RETURNING id, valid;

SELECT id FROM memberships WHERE member_id = $1 AND valid && daterange($2::date, $3::date);

SELECT p.name, date_trunc('month', lower(ms.valid)) AS month, count(*) AS signups
FROM memberships ms JOIN plans p ON p.id = ms.plan_id
GROUP BY GROUPING SETS ((p.name, date_trunc('month', lower(ms.valid))), (p.name), ())
ORDER BY 1, 2;

-- Events ------------------------------------------------------------------------------------------

SELECT e.id, e.title, e.starts_at, e.capacity, count(s.member_id) AS signed_up,
       e.capacity - count(s.member_id) AS places_left
FROM events e
LEFT JOIN event_signups s ON s.event_id = e.id
WHERE e.location_id = $1 AND e.starts_at > now()
GROUP BY e.id
ORDER BY e.starts_at;

INSERT INTO event_signups (event_id, member_id) VALUES ($1, $2) ON CONFLICT DO NOTHING;

UPDATE event_signups SET attended = true WHERE event_id = $1 AND member_id = ANY ($2::uuid[]);

SELECT e.title, count(*) FILTER (WHERE s.attended) AS came, count(*) FILTER (WHERE s.attended IS NOT TRUE) AS missed,
       round(avg(CASE WHEN s.attended THEN 1 ELSE 0 END), 2) AS rate
FROM events e JOIN event_signups s ON s.event_id = e.id
WHERE e.starts_at < now()
GROUP BY e.id;

INSERT INTO guest_passes (code, issued_by, guest_name, valid_on)
VALUES (upper(substr(md5(random()::text), 1, 8)), $1, $2, $3)
RETURNING code;

UPDATE guest_passes SET used_at = now() WHERE code = $1 AND used_at IS NULL AND valid_on = current_date RETURNING guest_name;

-- Support -----------------------------------------------------------------------------------------

SELECT t.id, t.subject, t.priority, t.opened_at, m.full_name, l.name AS location, now() - t.opened_at AS age
FROM support_tickets t
LEFT JOIN members m ON m.id = t.member_id
LEFT JOIN locations l ON l.id = t.location_id
WHERE t.closed_at IS NULL
ORDER BY t.priority, t.opened_at
LIMIT $1;

SELECT label, count(*) AS tickets FROM support_tickets, unnest(labels) AS label GROUP BY label ORDER BY tickets DESC;

UPDATE support_tickets SET closed_at = now(), labels = array_remove(labels, 'waiting') WHERE id = $1 RETURNING closed_at - opened_at AS resolution;

SELECT priority, percentile_disc(0.9) WITHIN GROUP (ORDER BY closed_at - opened_at) AS p90
FROM support_tickets WHERE closed_at IS NOT NULL GROUP BY priority;

-- Billing -----------------------------------------------------------------------------------------

WITH inv AS (
    INSERT INTO billing.invoices (member_id, number, state, issued_on, due_on)
    VALUES ($1, invoice_number($2, $3), 'open', current_date, current_date + 14)
    RETURNING id
), lines AS (
    INSERT INTO billing.invoice_lines (invoice_id, line_no, description, quantity, unit_price, reservation_id)
    SELECT inv.id, row_number() OVER (ORDER BY r.starts_at)::int2, 'Space ' || s.label,
           hours_between(r.starts_at, r.ends_at), s.hourly_rate, r.id
    FROM inv, reservations r JOIN spaces s ON s.id = r.space_id
    WHERE r.member_id = $1 AND r.state = 'checked_in'
    RETURNING invoice_id, quantity * unit_price AS amount
)
UPDATE billing.invoices i SET total = (SELECT coalesce(sum(amount), 0) FROM lines)
FROM inv WHERE i.id = inv.id
RETURNING i.id, i.number, i.total;

SELECT i.number, i.state, i.total, coalesce(sum(p.amount), 0) AS paid, i.total - coalesce(sum(p.amount), 0) AS due
FROM billing.invoices i
LEFT JOIN billing.payments p ON p.invoice_id = i.id
WHERE i.company_id = $1 OR i.member_id = $2
GROUP BY i.id
ORDER BY i.issued_on DESC NULLS FIRST;

SELECT id, number, due_on, current_date - due_on AS days_late FROM billing.invoices WHERE state = 'open' AND due_on < current_date ORDER BY due_on;

INSERT INTO billing.payments (invoice_id, amount, method, external_ref)
VALUES ($1, $2, $3, $4)
ON CONFLICT (external_ref) DO NOTHING
RETURNING id;

UPDATE billing.invoices i SET state = 'paid'
WHERE i.state = 'open' AND i.total <= (SELECT coalesce(sum(amount), 0) FROM billing.payments p WHERE p.invoice_id = i.id)
RETURNING i.id, i.number;

SELECT to_char(p.paid_at, 'YYYY-MM') AS month, p.method, sum(p.amount) AS received,
       sum(sum(p.amount)) OVER (PARTITION BY p.method ORDER BY to_char(p.paid_at, 'YYYY-MM')) AS running
FROM billing.payments p
GROUP BY 1, 2
ORDER BY 1, 2;

SELECT l.invoice_id, l.line_no, l.description, l.quantity * l.unit_price AS amount, r.starts_at
FROM billing.invoice_lines l LEFT JOIN reservations r ON r.id = l.reservation_id
WHERE l.invoice_id = $1 ORDER BY l.line_no;

-- Audit ---------------------------------------------------------------------------------------------

INSERT INTO audit_events (actor, action, subject, payload) VALUES ($1, $2, $3, $4) RETURNING id, at;

SELECT action, count(*) AS n, min(at) AS first, max(at) AS last FROM audit_events WHERE at > $1 GROUP BY action ORDER BY n DESC;

SELECT a.id, a.action, a.payload ->> 'member' AS member, m.full_name
FROM audit_events a
LEFT JOIN members m ON m.id = (a.payload ->> 'member')::uuid
WHERE a.subject = $1
ORDER BY a.at DESC
LIMIT 100;

SELECT m.id, m.full_name FROM members m WHERE m.id IN (SELECT member_ids_with_tag($1));

SELECT t.id FROM member_ids_with_tag('founder') AS t(id);
