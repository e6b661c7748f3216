-- 08: student reports from a coGroup of students and grades (seed 002).
-- Flink: students.coGroup(grades).where(_.id).equalTo(_.studentId), making
-- StudentReport(name, grades, avgScore) with avgScore 0.0 for no grades.
-- The order of rows inside a group is not promised: the subjects are
-- sorted here, and the average is rounded to 2 places.
.load ./build/dataset
.headers on
.mode box --wrap 0
.nullvalue NULL

CREATE TABLE students(id INTEGER, name TEXT);
INSERT INTO students VALUES (1, 'Alice'), (2, 'Bob'), (3, 'Charlie');

CREATE TABLE grades(student_id INTEGER, subject TEXT, score INTEGER);
INSERT INTO grades VALUES
  (1, 'Math', 90), (1, 'Science', 85), (2, 'Math', 78), (2, 'Science', 82),
  (1, 'History', 88);

-- The typed form: the key is the column id; the groups are JSON in both
-- forms.
CREATE VIRTUAL TABLE student_groups USING ds_cogroup(
  left=students, right=grades, left_key=id, right_key=student_id);

.print "students.coGroup(grades).where(_.id).equalTo(_.studentId):"
SELECT json_extract(g.left, '$[0].name') AS name,
       g.right_count AS grades,
       (SELECT group_concat(subject, ', ')
          FROM (SELECT json_extract(value, '$.subject') AS subject
                  FROM json_each(g.right) ORDER BY subject)) AS subjects,
       CASE WHEN g.right_count > 0
            THEN (SELECT round(avg(json_extract(value, '$.score')), 2)
                    FROM json_each(g.right))
            ELSE 0.0 END AS avg_score
FROM student_groups AS g
WHERE g.left_count > 0
ORDER BY g.id;
