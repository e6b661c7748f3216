-- 11: users joined with their activities (seed 002, Scala API).
-- Flink: users.join(activities).where(_.id).equalTo(_.userId) with a
-- JoinFunction making (user.id, user.name, user.email, activity.activity).
.load ./build/dataset
.headers on
.mode box --wrap 0
.nullvalue NULL

CREATE TABLE users(id INTEGER, name TEXT, email TEXT);
INSERT INTO users VALUES
  (1, 'Alice', 'alice@example.com'), (2, 'Bob', 'bob@example.com');

CREATE TABLE activities(user_id INTEGER, activity TEXT, timestamp INTEGER);
INSERT INTO activities VALUES
  (1, 'login', 1000), (1, 'view_page', 1001), (2, 'login', 1002);

.print "users.join(activities).where(_.id).equalTo(_.userId):"
SELECT json_extract(left, '$.id') AS id,
       json_extract(left, '$.name') AS name,
       json_extract(left, '$.email') AS email,
       json_extract(right, '$.activity') AS activity
FROM ds_join_hint('users', 'activities', 'id', 'user_id')
ORDER BY json_extract(right, '$.timestamp');
