-- 01: cities joined with temperatures (seed 000).
-- Flink: cities2.join(temp2).where(0).equalTo(0).first(10).print(), then
-- the temperatures summed per city.  Keys are given by position, as in
-- Flink's where(0) / equalTo(0).
.load ./build/dataset
.headers on
.mode box --wrap 0
.nullvalue NULL

CREATE TABLE cities(city_id INTEGER, name TEXT);
INSERT INTO cities VALUES
  (1, 'Boston'), (2, 'New York'), (3, 'Chicago'), (4, 'Philadelphia'),
  (5, 'San Francisco');

-- Five readings per city, one a day.  Days 1 and 2 are the ten join rows
-- the seed prints; days 3 to 5 make the seed's totals come out:
-- Boston 111, Chicago 116, New York 119, Philadelphia 116, San Francisco 113.
CREATE TABLE temperatures(city_id INTEGER, temp INTEGER, day INTEGER);
INSERT INTO temperatures VALUES
  (1, 21, 1), (2, 22, 1), (3, 23, 1), (4, 24, 1), (5, 25, 1),
  (1, 23, 2), (2, 24, 2), (3, 25, 2), (4, 26, 2), (5, 18, 2),
  (1, 22, 3), (2, 25, 3), (3, 22, 3), (4, 21, 3), (5, 24, 3),
  (1, 20, 4), (2, 23, 4), (3, 24, 4), (4, 22, 4), (5, 23, 4),
  (1, 25, 5), (2, 25, 5), (3, 22, 5), (4, 23, 5), (5, 23, 5);

.print "The first 10 rows of the join (days 1 and 2):"
SELECT key, left, right
FROM ds_join_hint('cities', 'temperatures', 0, 0)
ORDER BY json_extract(right, '$.day'), key
LIMIT 10;

-- On real data, the typed form: the inputs' own columns (a name in both
-- becomes left_NAME and right_NAME), no JSON, only the columns used read.
CREATE VIRTUAL TABLE city_temperatures USING ds_join_hint(
  left=cities, right=temperatures, left_key=0, right_key=0);

.print
.print "The same rows as Flink prints them:"
SELECT printf('((%d,%s),(%d,%d))',
              left_city_id, name, right_city_id, temp) AS tuple
FROM city_temperatures
ORDER BY day, left_city_id
LIMIT 10;

.print
.print "All rows of the join:"
SELECT count(*) AS join_rows
FROM ds_join_hint('cities', 'temperatures', 0, 0);

.print
.print "Total temperature per city:"
SELECT name AS city, sum(temp) AS total
FROM city_temperatures
GROUP BY city
ORDER BY city;
