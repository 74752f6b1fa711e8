#!/usr/bin/env python3
"""test_shell.py - end-to-end tests of the `lwc` shell (bin/lwc).

Starts a private deployment with scripts/lwc-local (its own directory and
free ports, binaries from $LWC_BIN, default bin/), then drives `lwc`:

  non-interactively: -c (repeatable), -f, SQL on stdin, the exact psql-like
  aligned / expanded / unaligned / CSV output, command tags, error reports
  with LINE and caret, exit codes 1 (usage), 2 (connection), 3 (a script
  statement failed), \\copy FROM/TO round trips, \\d, \\i, --json-lines;

  interactively under a pseudo-terminal: prompts and the continuation
  prompt, Ctrl-C cancelling the input line, \\timing, \\x, \\d, \\copy with a
  progress bar, errors that do not end the session, the history file,
  \\q and Ctrl-D.

The deployment is stopped at the end, also on failure.  Standard library
only.  Exit status 0 when every test passed.

    LWC_BIN=bin python3 tests/shell/test_shell.py [-v] [TEST_NAME ...]
"""
import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.abspath(os.environ["LWC_BIN"]) if os.environ.get("LWC_BIN") \
    else os.path.join(ROOT, "bin")
LWC = os.path.join(BIN, "lwc")
LOCAL = os.path.join(ROOT, "scripts", "lwc-local")
TIMEOUT = 120 if os.environ.get("LWC_SAN") else 60
VERBOSE = False

TMP = None      # test directory (deployment in TMP/deploy, HOME in TMP/home)
KEY = None      # the admin key file


class Failure(Exception):
    pass


def check(cond, msg, *details):
    if not cond:
        raise Failure(msg + "".join("\n--- %s" % (d,) for d in details))


def eq(got, want, what):
    if got != want:
        raise Failure("%s:\n--- got:\n%s\n--- want:\n%s" % (what, got, want))


def free_port_pair():
    """A port P with P and P+1 free on 127.0.0.1 (scripts/free-port)."""
    out = subprocess.run([os.path.join(ROOT, "scripts", "free-port"), "2"],
                         check=True, capture_output=True, text=True).stdout
    return int(out.strip())


def env(**extra):
    e = dict(os.environ)
    e["HOME"] = os.path.join(TMP, "home")
    e.pop("LWC_KEY", None)
    e.pop("LWC_HISTORY", None)
    e["LC_ALL"] = "C.UTF-8"
    e.update(extra)
    return e


def lwc(*args, stdin=None, key=True, extra_env=None):
    """Run lwc; returns (exit code, stdout, stderr) as text."""
    argv = [LWC] + (["--key", KEY] if key else []) + list(args)
    p = subprocess.run(argv, input=stdin, capture_output=True, text=True,
                       timeout=TIMEOUT, env=env(**(extra_env or {})))
    if VERBOSE:
        print("$ %s\n%s%s[rc=%d]" % (" ".join(argv), p.stdout, p.stderr, p.returncode))
    return p.returncode, p.stdout, p.stderr


def ok(*args, **kw):
    rc, out, err = lwc(*args, **kw)
    check(rc == 0, "lwc %s exited %d" % (" ".join(args), rc), out, err)
    return out


# ---- the deployment ------------------------------------------------------------------

def deploy_up():
    d = os.path.join(TMP, "deploy")
    port = free_port_pair()
    p = subprocess.run([LOCAL, "up", "--dir", d, "--port-base", str(port)],
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, LWC_BIN=BIN))
    if p.returncode != 0:
        raise RuntimeError("lwc-local up failed:\n%s%s" % (p.stdout, p.stderr))
    return d, os.path.join(d, "users", "admin.key"), port


def deploy_down(d):
    subprocess.run([LOCAL, "down", "--dir", d], capture_output=True, text=True, timeout=120,
                   env=dict(os.environ, LWC_BIN=BIN))


# ---- non-interactive -----------------------------------------------------------------------

def test_usage_errors():
    rc, out, err = lwc("-c", "SELECT 1", key=False)
    eq(rc, 1, "exit code without a key")
    check("--key" in err, "the message names --key", err)
    rc, _, err = lwc("--no-such-option")
    eq(rc, 1, "exit code of an unknown option")
    rc, _, err = lwc("extra-argument")
    eq(rc, 1, "exit code of an extra argument")
    rc, _, err = lwc("-f", os.path.join(TMP, "no-such-file.sql"))
    eq(rc, 1, "exit code of a missing -f file")
    rc, _, err = lwc("--key", os.path.join(TMP, "no-such.key"), "-c", "x", key=False)
    eq(rc, 1, "exit code of a missing key file")
    rc, _, err = lwc("--json-lines", "-c", "x")
    eq(rc, 1, "exit code of --json-lines with -c")
    rc, out, _ = lwc("--help", key=False)
    eq(rc, 0, "exit code of --help")
    check("--key" in out and "--json-lines" in out, "--help lists the options", out)


def test_connection_failure():
    port = free_port_pair()  # nothing listens there now
    rc, out, err = lwc("--proxy", "127.0.0.1:%d" % port, "-c", "SELECT * FROM x")
    eq(rc, 2, "exit code of a refused connection")
    check("connect" in err, "the error says so", err)
    # LWC_KEY instead of --key
    rc, out, err = lwc("-c", "\\d", key=False, extra_env={"LWC_KEY": KEY})
    eq(rc, 0, "exit code with LWC_KEY")


def test_aligned_output():
    out = ok("-c", "CREATE TABLE emp (id INT PRIMARY KEY, name TEXT, dept VARCHAR(10), salary FLOAT)",
             "-c", "INSERT INTO emp VALUES (1, 'Ann', 'eng', 100.5), (2, 'Bob', NULL, 90), "
                   "(30000, NULL, 'operations', NULL)",
             "-c", "SELECT * FROM emp ORDER BY id")
    eq(out, "CREATE TABLE\n"
            "INSERT 0 3\n"
            "  id   | name |    dept    | salary \n"
            "-------+------+------------+--------\n"
            "     1 | Ann  | eng        |  100.5\n"
            "     2 | Bob  |            |     90\n"
            " 30000 |      | operations |       \n"
            "(3 rows)\n"
            "\n", "aligned output")
    out = ok("-c", "UPDATE emp SET dept = 'hr' WHERE id = 2",
             "-c", "DELETE FROM emp WHERE id = 30000",
             "-c", "SELECT COUNT(*) FROM emp",
             "-c", "SELECT name, dept FROM emp WHERE id = 2",
             "-c", "SELECT name FROM emp WHERE id = 12345")
    eq(out, "UPDATE 1\n"
            "DELETE 1\n"
            " count \n"
            "-------\n"
            "     2\n"
            "(1 row)\n"
            "\n"
            " name | dept \n"
            "------+------\n"
            " Bob  | hr\n"
            "(1 row)\n"
            "\n"
            " name \n"
            "------\n"
            "(0 rows)\n"
            "\n", "tags, count, one row, no rows")
    # NULL display on request
    out = ok("--null", "NULL", "-c", "SELECT name, dept FROM emp ORDER BY id")
    eq(out, " name | dept \n"
            "------+------\n"
            " Ann  | eng\n"
            " Bob  | hr\n"
            "(2 rows)\n\n", "--null")
    out = ok("-c", "INSERT INTO emp VALUES (3, NULL, NULL, NULL)",
             "-c", "\\pset null (null)", "-c", "SELECT name FROM emp WHERE id = 3")
    check(" (null)\n" in out, "\\pset null shows the string", out)
    # multi-line cells continue with '+'
    ok("-c", "CREATE TABLE ml (id INT, t TEXT)", "-c", "INSERT INTO ml VALUES (1, 'a\nbc')")
    out = ok("-c", "SELECT t, id FROM ml")
    eq(out, " t  | id \n"
            "----+----\n"
            " a +|  1\n"
            " bc | \n"
            "(1 row)\n\n", "a cell with a line break")


def test_expanded_output():
    out = ok("-x", "-c", "SELECT * FROM emp WHERE id IN (1, 2) ORDER BY id")
    eq(out, "-[ RECORD 1 ]-\n"
            "id     | 1\n"
            "name   | Ann\n"
            "dept   | eng\n"
            "salary | 100.5\n"
            "-[ RECORD 2 ]-\n"
            "id     | 2\n"
            "name   | Bob\n"
            "dept   | hr\n"
            "salary | 90\n"
            "\n", "expanded output")
    out = ok("-c", "\\x", "-c", "SELECT id FROM emp WHERE id = 77")
    eq(out, "Expanded display is on.\n(0 rows)\n\n", "expanded, no rows")


def test_unaligned_and_csv():
    out = ok("-A", "-t", "-c", "SELECT * FROM emp WHERE id IN (1, 2, 3) ORDER BY id")
    eq(out, "1|Ann|eng|100.5\n2|Bob|hr|90\n3|||\n", "-A -t")
    out = ok("-A", "-c", "SELECT id, name FROM emp WHERE id IN (1, 3) ORDER BY id")
    eq(out, "id|name\n1|Ann\n3|\n(2 rows)\n", "-A")
    out = ok("-A", "-t", "-F", ",", "-c", "SELECT id, name FROM emp WHERE id = 1")
    eq(out, "1,Ann\n", "-F")
    ok("-c", "CREATE TABLE csvt (id INT, v TEXT)",
       "-c", "INSERT INTO csvt VALUES (1, 'plain'), (2, 'a,b'), (3, 'say \"hi\"'), "
             "(4, ''), (5, NULL), (6, 'two\nlines')")
    out = ok("--csv", "-c", "SELECT * FROM csvt ORDER BY id")
    eq(out, 'id,v\n1,plain\n2,"a,b"\n3,"say ""hi"""\n4,""\n5,\n6,"two\nlines"\n', "--csv")
    out = ok("--csv", "-t", "-c", "SELECT id FROM csvt WHERE id = 1")
    eq(out, "1\n", "--csv -t")


def test_errors_and_exit_codes():
    rc, out, err = lwc("-c", "SELECT * FROM emp WHERE nosuch = 1",
                       "-c", "INSERT INTO emp VALUES (99, 'never', NULL, NULL)")
    eq(rc, 3, "exit code of a failed -c")
    eq(err, 'ERROR:  column "nosuch" does not exist\n'
            "LINE 1: SELECT * FROM emp WHERE nosuch = 1\n"
            "                                ^\n", "error report")
    out = ok("-A", "-t", "-c", "SELECT COUNT(*) FROM emp WHERE id = 99")
    eq(out, "0\n", "the statement after the failed one did not run")
    rc, out, err = lwc("-c", "SELEC 1")
    eq(rc, 3, "syntax error exit code")
    check(err.startswith("ERROR:  ") and "LINE 1: SELEC 1\n        ^\n" in err,
          "syntax error with a caret", err)
    rc, out, err = lwc("-c", "\\nosuchcommand")
    eq(rc, 3, "exit code of an unknown meta command")
    check("invalid command \\nosuchcommand" in err, "message", err)


def test_script_file():
    path = os.path.join(TMP, "script.sql")
    with open(path, "w") as f:
        f.write("-- a comment line\n"
                "CREATE TABLE sf (id INT PRIMARY KEY,\n"
                "                 name TEXT);  -- trailing comment\n"
                "INSERT INTO sf VALUES (1, 'one;with;semicolons'),\n"
                "                      (2, 'two');\n"
                "SELECT name FROM sf WHERE id = 1; SELECT COUNT(*)\n"
                "  FROM sf;\n"
                "\n"
                "SELECT id\n"
                "  FROM sf\n"
                " WHERE nosuch = 1;\n"
                "INSERT INTO sf VALUES (3, 'after the error');\n")
    rc, out, err = lwc("-f", path)
    eq(rc, 3, "exit code of a failed script")
    eq(out, "CREATE TABLE\n"
            "INSERT 0 2\n"
            "        name         \n"
            "---------------------\n"
            " one;with;semicolons\n"
            "(1 row)\n"
            "\n"
            " count \n"
            "-------\n"
            "     2\n"
            "(1 row)\n"
            "\n", "script output")
    eq(err, "lwc:%s:11: ERROR:  column \"nosuch\" does not exist\n"
            "LINE 3:  WHERE nosuch = 1;\n"
            "               ^\n" % path, "script error with file and line")
    out = ok("-A", "-t", "-c", "SELECT COUNT(*) FROM sf")
    eq(out, "2\n", "the script stopped at the error")
    # -c and -f in order, \i, and the last statement without ';'
    inc = os.path.join(TMP, "inc.sql")
    with open(inc, "w") as f:
        f.write("INSERT INTO sf VALUES (4, 'included');\n")
    out = ok("-c", "INSERT INTO sf VALUES (5, 'first')", "-c", "\\i " + inc,
             "-A", "-t", "-c", "SELECT name FROM sf WHERE id IN (4, 5) ORDER BY id")
    eq(out, "INSERT 0 1\nINSERT 0 1\nincluded\nfirst\n", "-c, \\i, -c")


def test_stdin_script():
    rc, out, err = lwc("-A", "-t", stdin="SELECT name\nFROM sf\nWHERE id = 2;\n"
                                          "SELECT COUNT(*) FROM sf")
    eq((rc, out, err), (0, "two\n4\n", ""), "stdin script, last statement without ';'")
    rc, out, err = lwc(stdin="SELECT * FROM sf WHERE id = 1;\nDROP TABLE nosuch;\n"
                             "INSERT INTO sf VALUES (6, 'not run');\n")
    eq(rc, 3, "exit code of a failed stdin script")
    check(err.startswith("lwc:<stdin>:2: ERROR:  "), "stdin error prefix", err)
    out = ok("-A", "-t", "-c", "SELECT COUNT(*) FROM sf WHERE id = 6")
    eq(out, "0\n", "stdin stopped at the error")


def test_describe():
    out = ok("-c", "CREATE TABLE descr (id BIGINT PRIMARY KEY, code VARCHAR(8), "
                   "score FLOAT, note TEXT, n INT)", "-c", "\\d descr")
    eq(out, "CREATE TABLE\n"
            '                Table "descr"\n'
            " Column |    Type    | Nullable |     Key     \n"
            "--------+------------+----------+-------------\n"
            " id     | bigint     | not null | primary key\n"
            " code   | varchar(8) |          | \n"
            " score  | float      |          | \n"
            " note   | text       |          | \n"
            " n      | integer    |          | \n"
            "Indexes:\n"
            "    PRIMARY KEY (id)\n"
            "    RANGE (id)\n"
            "\n", "\\d TABLE")
    # NOT NULL and UNIQUE columns, a range index (psql's Indexes: footer)
    out = ok("-c", "CREATE TABLE descr2 (a INT NOT NULL, b TEXT UNIQUE, c INT)",
             "-c", "CREATE INDEX ON descr2 (c)", "-c", "\\d descr2")
    check(re.search(r"^ a +\| integer \| not null \| +$", out, re.M), "NOT NULL shown", out)
    check(re.search(r"^ b +\| text +\| +\| unique$", out, re.M), "UNIQUE shown", out)
    check("Indexes:\n    UNIQUE (b)\n" in out and "    RANGE (c)\n" in out, "indexes", out)
    out = ok("-t", "-c", "\\d descr2")
    check("Indexes" not in out, "no footer with -t", out)
    out = ok("-c", "\\d")
    check(out.startswith("List of tables\n") or "List of tables" in out.split("\n")[0],
          "\\d title", out)
    check(re.search(r"^ descr +\| table$", out, re.M), "\\d lists descr", out)
    check(re.search(r"^\(\d+ rows\)$", out, re.M), "\\d footer", out)
    rc, out, err = lwc("-c", "\\d nosuchtable")
    eq(rc, 3, "exit code of \\d of an unknown table")
    check('Did not find any table named "nosuchtable".' in err, "message", err)


def test_copy_roundtrip():
    src = os.path.join(TMP, "in.csv")
    rows = [("1", "plain", "1.5"), ("2", '"quoted, with comma"', "-2"),
            ("3", '"multi\nline ""quote"""', ""), ("4", '""', "3e3"), ("5", "", "0")]
    with open(src, "w") as f:
        f.write("id,txt,x\n")
        for r in rows:
            f.write(",".join(r) + "\n")
    out = ok("-c", "CREATE TABLE cp (id INT PRIMARY KEY, txt TEXT, x FLOAT)",
             "-c", "\\copy cp FROM '%s' CSV HEADER" % src)
    eq(out, "CREATE TABLE\nCOPY 5\n", "\\copy FROM")
    out = ok("--null", "<null>", "-c", "SELECT * FROM cp ORDER BY id")
    eq(out, " id |        txt         |   x    \n"
            "----+--------------------+--------\n"
            "  1 | plain              |    1.5\n"
            "  2 | quoted, with comma |     -2\n"
            '  3 | multi             +| <null>\n'
            '    | line "quote"       | \n'
            "  4 |                    |   3000\n"
            "  5 | <null>             |      0\n"
            "(5 rows)\n\n", "rows loaded by \\copy (NULL vs empty string)")
    dst = os.path.join(TMP, "out.csv")
    out = ok("-c", "\\copy (SELECT * FROM cp ORDER BY id) TO '%s' CSV HEADER" % dst)
    eq(out, "COPY 5\n", "\\copy TO")
    with open(dst) as f:
        eq(f.read(), 'id,txt,x\n1,plain,1.5\n2,"quoted, with comma",-2\n'
                     '3,"multi\nline ""quote""",\n4,"",3000\n5,,0\n', "CSV written")
    # text format (the default) both ways
    txt = os.path.join(TMP, "out.txt")
    ok("-c", "\\copy cp TO '%s'" % txt)
    with open(txt) as f:
        eq(f.read(), '1\tplain\t1.5\n2\tquoted, with comma\t-2\n3\tmulti\\nline "quote"\t\\N\n'
                     '4\t\t3000\n5\t\\N\t0\n', "text format written")
    out = ok("-c", "CREATE TABLE cp2 (id INT PRIMARY KEY, txt TEXT, x FLOAT)",
             "-c", "\\copy cp2 FROM '%s'" % txt,
             "-c", "\\copy (SELECT * FROM cp2 ORDER BY id) TO STDOUT WITH (FORMAT csv)")
    eq(out, 'CREATE TABLE\nCOPY 5\n1,plain,1.5\n2,"quoted, with comma",-2\n'
            '3,"multi\nline ""quote""",\n4,"",3000\n5,,0\nCOPY 5\n', "text round trip")
    # a bad line stops the script with its line number; no progress bar off a terminal
    bad = os.path.join(TMP, "bad.csv")
    with open(bad, "w") as f:
        f.write("10,a,1\n11,b\n12,c,3\n")
    rc, out, err = lwc("-c", "\\copy cp FROM '%s' CSV" % bad, "-c", "SELECT 1 FROM cp")
    eq(rc, 3, "exit code of a bad \\copy")
    check('missing data for column "x"' in err and "line 2" in err, "bad line reported", err)
    check("[#" not in err and "\r" not in err, "no progress bar when stderr is not a tty", err)
    # a bad value the server or the client refuses inside a batch: the exact
    # line (and column), not the batch's range of lines (issue 17)
    with open(bad, "w") as f:
        f.write("20,a,1\n21,b,2\n22,c,oops\n23,d,4\n")
    rc, out, err = lwc("-c", "\\copy cp FROM '%s' CSV" % bad)
    eq(rc, 3, "exit code of a bad value in \\copy")
    check("COPY cp, line 3, column x: 'oops'" in err, "a bad value names its line and column",
          err)
    with open(bad, "w") as f:
        f.write("30,a,1\n31,b,2\n32,c,3\n31,d,4\n")
    rc, out, err = lwc("-c", "\\copy cp FROM '%s' CSV" % bad)
    eq(rc, 3, "exit code of a duplicate key in \\copy")
    check("COPY cp, lines 2 and 4" in err, "a duplicate key names both lines", err)
    with open(bad, "w") as f:
        f.write("40,a,1\n1,b,2\n")
    rc, out, err = lwc("-c", "\\copy cp FROM '%s' CSV" % bad)
    check(rc == 3 and "COPY cp, line 2 " in err, "a key already in the table names its line", err)
    out = ok("-A", "-t", "-c", "SELECT COUNT(*) FROM cp WHERE id >= 20 AND id < 50")
    eq(out, "0\n", "a failed batch loads none of its lines")
    # a larger file in batches
    big = os.path.join(TMP, "big.csv")
    with open(big, "w") as f:
        for i in range(2500):
            f.write("%d,name %d,%d.25\n" % (100 + i, i, i))
    out = ok("-c", "\\copy cp FROM '%s' CSV" % big, "-A", "-t",
             "-c", "SELECT COUNT(*) FROM cp", "-c", "SELECT txt, x FROM cp WHERE id = 2599")
    eq(out, "COPY 2500\n2505\nname 2499|2499.25\n", "batched \\copy")
    # in statements of 300 rows, each made while the one before it is at the
    # proxy: 9 statements, every row once
    rc, out, err = lwc("-c", "CREATE TABLE cpp (id INT PRIMARY KEY, txt TEXT, x FLOAT)",
                       "-c", "\\copy cpp FROM '%s' CSV" % big, "-A", "-t",
                       "-c", "SELECT COUNT(*), SUM(id), MIN(id), MAX(id) FROM cpp",
                       extra_env={"LWC_COPY_ROWS": "300"})
    eq((rc, out), (0, "CREATE TABLE\nCOPY 2500\n2500|3373750|100|2599\n"),
       "\\copy in 9 overlapped statements")
    # a duplicate key in the 5th statement (lines 1201-1500): the four before
    # it loaded, it not, nor the 6th (made and sent while the 5th was at the
    # proxy, which does not run it)
    dup = os.path.join(TMP, "dup.csv")
    with open(dup, "w") as f:
        for i in range(2500):
            f.write("%d,n,%d\n" % (10000 + (5 if i == 1399 else i), i))
    rc, out, err = lwc("-c", "CREATE TABLE cpd (id INT PRIMARY KEY, txt TEXT, x FLOAT)",
                       "-c", "\\copy cpd FROM '%s' CSV" % dup, extra_env={"LWC_COPY_ROWS": "300"})
    eq(rc, 3, "exit code of a duplicate key in an overlapped \\copy")
    check("COPY cpd, line 1400 (1200 rows loaded before it; none of lines 1201-1500)" in err,
          "the failing statement's line and the rows before it", err)
    out = ok("-A", "-t", "-c", "SELECT COUNT(*), MAX(id) FROM cpd")
    eq(out, "1200|11199\n", "nothing after the failing statement loaded")
    # a bad value in the 3rd statement, found before it is sent
    with open(dup, "w") as f:
        for i in range(1000):
            f.write("%d,n,%s\n" % (20000 + i, "oops" if i == 700 else str(i)))
    rc, out, err = lwc("-c", "CREATE TABLE cpv (id INT PRIMARY KEY, txt TEXT, x FLOAT)",
                       "-c", "\\copy cpv FROM '%s' CSV" % dup, extra_env={"LWC_COPY_ROWS": "300"})
    check(rc == 3 and "COPY cpv, line 701, column x: 'oops'" in err and
          "(600 rows loaded before it" in err, "a bad value in an overlapped \\copy", err)
    eq(ok("-A", "-t", "-c", "SELECT COUNT(*) FROM cpv"), "600\n", "the two statements before it")
    # a short line in the 4th statement while the 3rd is in flight
    with open(dup, "w") as f:
        for i in range(1000):
            f.write("%d,n\n" % (30000 + i) if i == 950 else "%d,n,%d\n" % (30000 + i, i))
    rc, out, err = lwc("-c", "CREATE TABLE cps (id INT PRIMARY KEY, txt TEXT, x FLOAT)",
                       "-c", "\\copy cps FROM '%s' CSV" % dup, extra_env={"LWC_COPY_ROWS": "300"})
    check(rc == 3 and "line 951 (900 rows before it loaded)" in err,
          "a short line after statements in flight", err)
    eq(ok("-A", "-t", "-c", "SELECT COUNT(*) FROM cps"), "900\n", "the three statements before it")


def test_json_lines():
    reqs = [
        {"sql": "CREATE TABLE js (id INT PRIMARY KEY, f FLOAT, t TEXT)"},
        {"sql": "INSERT INTO js VALUES (1, 2.0, 'x'), (2, -0.5, NULL), (3, NULL, '\u00e9\U0001F600\"\\')"},
        {"sql": "SELECT * FROM js ORDER BY id"},
        {"sql": "SELECT * FROM nosuch"},
        {"sql": "UPDATE js SET t = 'y' WHERE id = 1"},
        {"sql": "DELETE FROM js WHERE id = 2"},
        {"sql": "SELECT COUNT(*) FROM js"},
    ]
    lines = [json.dumps(r) for r in reqs]
    # escapes written by hand: \\u with a surrogate pair, \\n, \\/ and other members
    lines.insert(3, '{"other": [1, {"a": null}, true], "sql": "SELECT t FROM js WHERE t = '
                    "'\\u00e9\\ud83d\\ude00\\\"\\\\'\\n\"}")
    lines += ["", "not json", '{"sql": 1}', '{"sql": "x\\ud800"}', '{"sql": "a"} x',
              '{"sql": "SELECT id FROM js WHERE id = 1"}']
    p = subprocess.run([LWC, "--key", KEY, "--json-lines"], input="\n".join(lines) + "\n",
                       capture_output=True, text=True, timeout=TIMEOUT, env=env())
    eq(p.returncode, 0, "exit code of --json-lines")
    got = [json.loads(x) for x in p.stdout.splitlines()]
    check(len(got) == len(lines) - 1, "one answer per request line", p.stdout)
    eq(got[0], {"ok": True, "count": 0}, "CREATE")
    eq(got[1], {"ok": True, "count": 3}, "INSERT count")
    eq(got[2], {"columns": ["id", "f", "t"],
                "rows": [[1, 2.0, "x"], [2, -0.5, None], [3, None, "\u00e9\U0001F600\"\\"]]},
       "typed rows")
    check(isinstance(got[2]["rows"][0][1], float), "a FLOAT stays a float", p.stdout)
    check(isinstance(got[2]["rows"][0][0], int), "an INT is an int", p.stdout)
    eq(got[3], {"columns": ["t"], "rows": [["\u00e9\U0001F600\"\\"]]}, "escapes and surrogates")
    check("err" in got[4] and "nosuch" in got[4]["err"], "error answer", got[4])
    eq(got[5], {"ok": True, "count": 1}, "UPDATE after an error")
    eq(got[6], {"ok": True, "count": 1}, "DELETE")
    eq(got[7], {"columns": ["count"], "rows": [[2]]}, "COUNT(*)")
    for k in range(8, 12):
        check(list(got[k]) == ["err"], "bad request line %d answered with err" % k, got[k])
    eq(got[12], {"columns": ["id"], "rows": [[1]]}, "the session goes on")


# ---- interactive ----------------------------------------------------------------------------

class Pty:
    """lwc on a pseudo-terminal."""

    def __init__(self, *args, home=None):
        self.buf = b""
        e = env(TERM="dumb", COLUMNS="120", LINES="40")
        if home:
            e["HOME"] = home
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                os.execve(LWC, [LWC, "--key", KEY] + list(args), e)
            finally:
                os._exit(127)
        self.log = b""

    def read_until(self, pat, timeout=TIMEOUT):
        """Everything up to and including the regex pat (bytes)."""
        rx = re.compile(pat.encode() if isinstance(pat, str) else pat)
        end = time.time() + timeout
        while True:
            m = rx.search(self.buf)
            if m:
                out, self.buf = self.buf[:m.end()], self.buf[m.end():]
                return out.decode("utf-8", "replace").replace("\r\n", "\n")
            left = end - time.time()
            if left <= 0:
                raise Failure("timed out waiting for %r; output so far:\n%r" % (pat, self.buf))
            r, _, _ = select.select([self.fd], [], [], min(left, 0.5))
            if r:
                try:
                    d = os.read(self.fd, 65536)
                except OSError:
                    d = b""
                if not d:
                    raise Failure("lwc closed the terminal waiting for %r; output:\n%r"
                                  % (pat, self.buf))
                self.buf += d
                self.log += d

    def send(self, s):
        os.write(self.fd, s.encode() if isinstance(s, str) else s)

    def wait(self, timeout=TIMEOUT):
        end = time.time() + timeout
        while time.time() < end:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                try:
                    while True:
                        r, _, _ = select.select([self.fd], [], [], 0.1)
                        if not r:
                            break
                        d = os.read(self.fd, 65536)
                        if not d:
                            break
                        self.buf += d
                except OSError:
                    pass
                os.close(self.fd)
                return os.waitstatus_to_exitcode(status)
            time.sleep(0.05)
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        raise Failure("lwc did not exit")

    def kill(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except OSError:
            pass


PROMPT = r"admin=> $"


def test_interactive_session():
    home = os.path.join(TMP, "home-int")
    os.makedirs(home, exist_ok=True)
    csvf = os.path.join(TMP, "tty.csv")
    with open(csvf, "w") as f:
        f.write("id,name\n")
        for i in range(3000):
            f.write('%d,"n%d"\n' % (1000 + i, i))
    t = Pty(home=home)
    try:
        banner = t.read_until(PROMPT)
        check("admin" in banner and "\\?" in banner, "banner", banner)
        # a statement over several lines, with the continuation prompts
        t.send("CREATE TABLE tty (id INT PRIMARY KEY,\n")
        t.read_until(r"admin\(> $")
        t.send("  name TEXT)\n")
        t.read_until(r"admin-> $")
        t.send(";\n")
        out = t.read_until(PROMPT)
        check("CREATE TABLE" in out, "multi-line CREATE ran", out)
        # Ctrl-C cancels the line being typed, and the buffer of the statement
        t.send("INSERT INTO tty VALUES (1,\n")
        t.read_until(r"admin\(> $")
        t.send("'half a string")
        time.sleep(0.3)
        t.send(b"\x03")
        out = t.read_until(PROMPT)
        check("^C" in out, "Ctrl-C acknowledged", out)
        t.send("SELECT COUNT(*) FROM tty;\n")
        out = t.read_until(PROMPT)
        check(re.search(r"count \n-------\n +0\n\(1 row\)", out),
              "the cancelled INSERT never ran and the buffer was cleared", out)
        # a string over two lines: the quote prompt
        t.send("INSERT INTO tty VALUES (7, 'two\n")
        t.read_until(r"admin'> $")
        t.send("lines');\n")
        out = t.read_until(PROMPT)
        check("INSERT 0 1" in out, "INSERT of a two-line string", out)
        # \timing
        t.send("\\timing\n")
        out = t.read_until(PROMPT)
        check("Timing is on." in out, "\\timing on", out)
        t.send("SELECT name FROM tty WHERE id = 7;\n")
        out = t.read_until(PROMPT)
        check(re.search(r" two +\+\n lines\n\(1 row\)\n\nTime: \d+\.\d{3} ms\n", out),
              "a row and its time", out)
        t.send("\\timing off\n")
        t.read_until(PROMPT)
        # an error does not end the session
        t.send("SELECT nosuch FROM tty;\n")
        out = t.read_until(PROMPT)
        check('ERROR:  column "nosuch" does not exist' in out and "^" in out, "error", out)
        # \d and \x
        t.send("\\d tty\n")
        out = t.read_until(PROMPT)
        check('Table "tty"' in out and re.search(r" id +\| integer +\| not null \| primary key",
                                                  out), "\\d tty", out)
        t.send("\\x\n")
        t.read_until(PROMPT)
        t.send("SELECT * FROM tty WHERE id = 7;\n")
        out = t.read_until(PROMPT)
        check("-[ RECORD 1 ]" in out and "id   | 7" in out, "expanded display", out)
        t.send("\\x off\n")
        t.read_until(PROMPT)
        # \copy with a progress bar on the terminal
        t.send("\\copy tty FROM '%s' WITH (FORMAT csv, HEADER)\n" % csvf)
        out = t.read_until(PROMPT)
        check(re.search(r"\[#+\.*\] +\d+%", out) and "COPY 3000" in out,
              "progress bar and COPY tag", out)
        t.send("SELECT COUNT(*) FROM tty;\n")
        out = t.read_until(PROMPT)
        check(re.search(r" +3001\n\(1 row\)", out), "rows after \\copy", out)
        # Ctrl-C during an UPDATE: cancelled all or nothing, the session stays
        # (whether the signal lands in the statement or just before it, the
        # table holds all of it or none)
        t.send("UPDATE tty SET name = 'cancelled?' WHERE id > 0;\n")
        time.sleep(0.05)
        t.send(b"\x03")
        out = t.read_until(PROMPT)
        # a ^C that arrives after the UPDATE ended cancels the line being
        # typed at the next prompt instead: ask again until a count comes
        # back (no sleep to guess when the signal has been handled)
        m = None
        out2 = ""
        for _ in range(5):
            t.send("SELECT COUNT(*) FROM tty WHERE name = 'cancelled?';\n")
            out2 = t.read_until(PROMPT)
            m = re.search(r"count \n-------\n +(\d+)\n\(1 row\)", out2)
            if m:
                break
        check(m and m.group(1) in ("0", "3001"), "a cancelled UPDATE is all or nothing",
              out, out2)
        check(m.group(1) == "3001" or "canceling statement due to user request" in out
              or "^C" in out, "the cancellation is reported", out)
        # \q
        t.send("\\q\n")
        eq(t.wait(), 0, "exit code of \\q")
    except BaseException:
        t.kill()
        raise
    hist = os.path.join(home, ".lwc_history")
    check(os.path.exists(hist), "history file written")
    eq(os.stat(hist).st_mode & 0o777, 0o600, "history file mode")
    with open(hist, "rb") as f:
        h = f.read().decode("utf-8", "replace")
    # libedit stores entries vis(3)-encoded: a space is \040
    h = h.replace("\\040", " ")
    check("CREATE TABLE tty (id INT PRIMARY KEY, name TEXT) ;" in h or
          "CREATE TABLE tty" in h, "the multi-line statement in the history", h)
    check("SELECT COUNT(*) FROM tty;" in h and "\\134timing" in h, "statements and commands", h)
    check("half a string" not in h, "the cancelled line is not in the history", h)

    # history is loaded by the next session; Ctrl-D quits
    t = Pty(home=home)
    try:
        t.read_until(PROMPT)
        # libedit prints the prompt before it puts the terminal in raw mode;
        # a ^D typed in between is an EOF of the cooked line discipline,
        # which the switch to raw mode drops: let the switch happen first
        time.sleep(0.5)
        t.send(b"\x04")
        eq(t.wait(), 0, "exit code of Ctrl-D")
    except BaseException:
        t.kill()
        raise


def test_interactive_quit_words():
    t = Pty("-q")
    try:
        t.read_until(PROMPT)
        t.send("help\n")
        out = t.read_until(PROMPT)
        check("\\?" in out, "help", out)
        t.send("\\?\n")
        out = t.read_until(PROMPT)
        check("\\copy" in out and "\\timing" in out, "\\? lists the commands", out)
        t.send("quit\n")
        eq(t.wait(), 0, "exit code of quit")
    except BaseException:
        t.kill()
        raise


# ---- runner ---------------------------------------------------------------------------------

TESTS = [
    test_usage_errors,
    test_connection_failure,
    test_aligned_output,
    test_expanded_output,
    test_unaligned_and_csv,
    test_errors_and_exit_codes,
    test_script_file,
    test_stdin_script,
    test_describe,
    test_copy_roundtrip,
    test_json_lines,
    test_interactive_session,
    test_interactive_quit_words,
]


def main():
    global TMP, KEY, VERBOSE
    args = sys.argv[1:]
    if "-v" in args:
        VERBOSE = True
        args.remove("-v")
    if not os.access(LWC, os.X_OK):
        print("test_shell: %s is missing; run make first" % LWC)
        return 1
    TMP = tempfile.mkdtemp(prefix="lwc-shell-")
    os.makedirs(os.path.join(TMP, "home"))
    deploy = None
    failed = 0
    try:
        deploy, KEY, port = deploy_up()
        print("   deployment in %s, ports %d-%d" % (deploy, port, port + 1))
        for t in TESTS:
            if args and t.__name__ not in args:
                continue
            t0 = time.time()
            try:
                t()
                print("   ok   %s (%.1fs)" % (t.__name__, time.time() - t0))
            except Exception as e:
                failed += 1
                print("   FAIL %s: %s" % (t.__name__, e))
                if not isinstance(e, Failure):
                    traceback.print_exc()
    finally:
        if deploy:
            deploy_down(deploy)
        if failed and os.environ.get("LWC_KEEP_TMP"):
            print("   kept %s" % TMP)
        else:
            shutil.rmtree(TMP, ignore_errors=True)
    print("   %d test(s) failed" % failed if failed else "   all shell tests passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
