-- 07: employees left-outer-joined with departments (seed 002, Scala API).
-- Flink: employees.leftOuterJoin(departments).where(_.deptId).equalTo(_.id),
-- making EmployeeDept(empName, deptName: Option[String]); Charlie's
-- department 99 does not exist, so his deptName is None (here NULL).
.load ./build/dataset
.headers on
.mode box --wrap 0
.nullvalue NULL

CREATE TABLE employees(id INTEGER, name TEXT, dept_id INTEGER);
INSERT INTO employees VALUES
  (1, 'Alice', 10), (2, 'Bob', 20), (3, 'Charlie', 99);

CREATE TABLE departments(id INTEGER, name TEXT);
INSERT INTO departments VALUES (10, 'Engineering'), (20, 'Sales');

.print "employees.leftOuterJoin(departments).where(_.deptId).equalTo(_.id):"
SELECT key, left, right
FROM ds_join_hint('employees', 'departments', 'dept_id', 'id',
                  NULL, 'LEFT_OUTER')
ORDER BY json_extract(left, '$.id');

.print
.print "As EmployeeDept(empName, deptName):"
SELECT json_extract(left, '$.name') AS emp_name,
       json_extract(right, '$.name') AS dept_name
FROM ds_join_hint('employees', 'departments', 'dept_id', 'id',
                  NULL, 'LEFT_OUTER')
ORDER BY emp_name;
