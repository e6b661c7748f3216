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

-- The typed form: the inputs' own columns, no JSON.
CREATE VIRTUAL TABLE user_activities USING ds_join_hint(
  left=users, right=activities, left_key=id, right_key=user_id);

.print "users.join(activities).where(_.id).equalTo(_.userId):"
SELECT id, name, email, activity
FROM user_activities
ORDER BY timestamp;
