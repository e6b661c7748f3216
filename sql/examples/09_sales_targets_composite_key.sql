-- 09: sales joined with targets on a composite key (seed 002, Scala API).
-- Flink: sales.join(targets).where(s => (s.year, s.quarter, s.region))
-- .equalTo(t => (t.year, t.quarter, t.region)), making
-- Performance(year, quarter, region, actual, target, achievement).
-- A composite key comes back as a JSON array.
.load ./build/dataset
.headers on
.mode box --wrap 0
.nullvalue NULL

CREATE TABLE sales(year INTEGER, quarter INTEGER, region TEXT, amount REAL);
INSERT INTO sales VALUES
  (2023, 1, 'US', 1000000), (2023, 1, 'EU', 800000), (2023, 2, 'US', 1200000);

CREATE TABLE targets(year INTEGER, quarter INTEGER, region TEXT, target REAL);
INSERT INTO targets VALUES
  (2023, 1, 'US', 900000), (2023, 1, 'EU', 750000), (2023, 2, 'US', 1100000);

.print "sales.join(targets) on (year, quarter, region):"
SELECT key, left, right
FROM ds_join_hint('sales', 'targets',
                  'year,quarter,region', 'year,quarter,region')
ORDER BY key;

.print
.print "As Performance(year, quarter, region, actual, target, achievement):"
SELECT json_extract(left, '$.year') AS year,
       json_extract(left, '$.quarter') AS quarter,
       json_extract(left, '$.region') AS region,
       json_extract(left, '$.amount') AS actual,
       json_extract(right, '$.target') AS target,
       round(json_extract(left, '$.amount') /
             json_extract(right, '$.target'), 4) AS achievement
FROM ds_join_hint('sales', 'targets', '0,1,2', '0,1,2')
ORDER BY year, quarter, region;
