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

-- The typed form: the inputs' own columns (a name in both becomes
-- left_NAME and right_NAME), no JSON.
CREATE VIRTUAL TABLE products USING ds_cross(left=colors, right=sizes);

.print "colors.cross(sizes) as Product(color, size, colorHex, sizeDimension):"
SELECT left_name AS color, right_name AS size, hex AS color_hex,
       dimension AS size_dimension
FROM products
ORDER BY color, size;
