-- 04: cross product of colors and sizes (seed 001, "Cross Operations").
-- Flink: colors.cross(sizes), then with a CrossFunction returning
-- size + " " + color + " item".
.load ./build/dataset
.headers on
.mode box --wrap 0
.nullvalue NULL

CREATE TABLE colors(color TEXT);
INSERT INTO colors VALUES ('red'), ('blue');

CREATE TABLE sizes(size TEXT);
INSERT INTO sizes VALUES ('small'), ('large');

.print "colors.cross(sizes):"
SELECT left, right
FROM ds_cross('colors', 'sizes')
ORDER BY left, right;

-- The typed form, for real data: typed columns, no JSON.
CREATE VIRTUAL TABLE color_sizes USING ds_cross(left=colors, right=sizes);

.print
.print "With the cross function size + \" \" + color + \" item\":"
SELECT size || ' ' || color || ' item' AS item
FROM color_sizes
ORDER BY item;
