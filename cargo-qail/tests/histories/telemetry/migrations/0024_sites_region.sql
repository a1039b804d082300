CREATE TABLE site_groups (code text NOT NULL, region text NOT NULL, PRIMARY KEY (code, region)) PARTITION BY LIST (region);
CREATE TABLE site_groups_eu PARTITION OF site_groups FOR VALUES IN ('eu');
CREATE TABLE site_groups_us PARTITION OF site_groups FOR VALUES IN ('us', 'ca');
ALTER TABLE sites ADD COLUMN group_code text;
