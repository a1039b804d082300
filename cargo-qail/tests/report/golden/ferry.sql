-- Queries of a ferry-booking application, as `cargo qail analyze` reads them:
-- statements end at `;`, a `-- name:` line names the statement after it.

-- name: Departures
SELECT s.id, s.departs_at, origin.name AS origin, destination.name AS destination,
       v.name AS vessel, s.seats_left
FROM sailings s
JOIN odyssey_connections c ON c.id = s.connection_id
LEFT JOIN harbors AS origin ON origin.id = c.origin_harbor_id
LEFT JOIN harbors destination ON destination.id = c.destination_harbor_id
LEFT JOIN vessels v ON v.id = s.vessel_id
WHERE s.sail_date = $1 AND destination.country = $2
ORDER BY s.departs_at;

-- name: BookSeats
INSERT INTO bookings (customer_id, sailing_id, seats, total, discount_code)
VALUES ($1, $2, $3, $4, $5)
RETURNING id, status, booked_at;

-- Not named: reported as "statement 3".
SELECT c.email, count(b.id) AS bookings, sum(b.total) AS spent,
       E'it\'s; fine' AS note, $tag$ a ; b $tag$ AS quoted
FROM customers c LEFT JOIN bookings b ON b.customer_id = c.id
GROUP BY c.email;

-- name: Misspelled
SELECT id, name
FROM harbors
WHERE contry = $1;

-- name: InvoiceTotals
SELECT i.currency, max(i.amount) AS largest, i.line_items
FROM billing.invoices i
WHERE i.issued_on >= $1::date
GROUP BY i.currency, i.line_items;
