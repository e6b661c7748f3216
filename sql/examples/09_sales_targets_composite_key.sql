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

-- The typed form, for real data: typed columns, no JSON.
CREATE VIRTUAL TABLE sales_targets USING ds_join_hint(
  left=sales, right=targets, left_key='0,1,2', right_key='0,1,2');

.print
.print "As Performance(year, quarter, region, actual, target, achievement):"
SELECT left_year AS year, left_quarter AS quarter, left_region AS region,
       amount AS actual, target, round(amount / target, 4) AS achievement
FROM sales_targets
ORDER BY year, quarter, region;
