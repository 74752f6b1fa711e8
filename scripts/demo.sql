-- demo.sql - the example statements of `make demo` (run by scripts/demo.sh
-- with `lwc -e`, which prints each statement before its result).
\timing on
\echo
\echo '== A point query: the literal becomes a keyword token; the proxy finds the'
\echo '== record in its index and reads it obliviously among random blocks.'
SELECT * FROM people WHERE id = 42;
\echo
\echo '== IN: one token per value.'
SELECT id, name, city FROM people WHERE id IN (7, 77, 777, 7777) ORDER BY id;
\echo
\echo '== A range on the primary key: the client sends the prefix tokens that cover'
\echo '== [1000, 1004] (a range index, docs/client.md); the proxy reads only the'
\echo '== blocks of the matching rows, as for an IN.'
SELECT id, name, city FROM people WHERE id BETWEEN 1000 AND 1004 ORDER BY id;
\echo
\echo '== A range with residual filtering: the city token narrows the candidates,'
\echo '== the client decrypts them and applies BETWEEN and > itself.'
SELECT id, name, age, salary FROM people
 WHERE city = 'Nelson' AND age BETWEEN 30 AND 35 AND salary > 150000
 ORDER BY salary DESC LIMIT 5;
\echo
\echo '== COUNT(*), over a token and over everything; NULLs have their own token.'
SELECT COUNT(*) FROM people WHERE city = 'Dunedin';
SELECT COUNT(*) FROM people WHERE age IS NULL;
SELECT COUNT(*) FROM people;
\echo
\echo '== GROUP BY, aggregates, LIKE: the proxy returns the rows the WHERE selects'
\echo '== (here the city token); the client groups, aggregates and sorts.'
SELECT city, count(*), round(avg(salary)) AS avg_salary, max(age)
  FROM people WHERE city IN ('Nelson', 'Dunedin', 'Rotorua') GROUP BY city ORDER BY 2 DESC;
SELECT name, upper(city) AS city FROM people WHERE id < 200 AND name LIKE 'Emma%' ORDER BY name LIMIT 3;
\echo
\echo '== A join and a subquery: each table is a SELECT of its own (regions by the'
\echo '== region token, then people by the IN tokens of the cities found); the'
\echo '== client joins, groups and sorts.'
DROP TABLE IF EXISTS regions;
CREATE TABLE regions (city TEXT PRIMARY KEY, region TEXT);
INSERT INTO regions VALUES ('Nelson', 'Tasman'), ('Dunedin', 'Otago'), ('Queenstown', 'Otago'),
  ('Rotorua', 'Bay of Plenty'), ('Tauranga', 'Bay of Plenty');
SELECT r.region, p.city, count(*), max(p.age)
  FROM people p JOIN regions r ON p.city = r.city
 WHERE r.region IN ('Otago', 'Tasman') GROUP BY r.region, p.city ORDER BY 1, 2;
SELECT count(*) FROM people WHERE city IN (SELECT city FROM regions WHERE region = 'Bay of Plenty');
\echo
\echo '== An UPDATE, and the row it changed.'
UPDATE people SET city = 'Wellington', salary = 99999.99 WHERE id = 42;
SELECT * FROM people WHERE id = 42;
