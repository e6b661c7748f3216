-- 10: every color with every size (seed 002, Scala API).
-- Flink: colors.cross(sizes), making
-- Product(color, size, colorHex, sizeDimension).
.load ./build/dataset
.headers on
.mode box --wrap 0
.nullvalue NULL

CREATE TABLE colors(name TEXT, hex TEXT);
INSERT INTO colors VALUES
  ('Red', '#FF0000'), ('Blue', '#0000FF'), ('Green', '#00FF00');

CREATE TABLE sizes(name TEXT, dimension TEXT);
INSERT INTO sizes VALUES ('Small', 'S'), ('Medium', 'M'), ('Large', 'L');

.print "colors.cross(sizes) as Product(color, size, colorHex, sizeDimension):"
SELECT json_extract(left, '$.name') AS color,
       json_extract(right, '$.name') AS size,
       json_extract(left, '$.hex') AS color_hex,
       json_extract(right, '$.dimension') AS size_dimension
FROM ds_cross('colors', 'sizes')
ORDER BY color, size;
