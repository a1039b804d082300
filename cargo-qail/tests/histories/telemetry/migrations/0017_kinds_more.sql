ALTER TYPE reading_kind ADD VALUE 'pressure';
ALTER TYPE reading_kind ADD VALUE 'co2' AFTER 'humidity';
