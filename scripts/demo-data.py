#!/usr/bin/env python3
"""demo-data.py - the deterministic sample table of `make demo`.

    scripts/demo-data.py [ROWS] > people.csv

Writes a CSV file with a header line: id, name, city, age, salary.  The
same ROWS (default 10000) always give the same bytes (fixed seed, no
clock).  About 3% of names, 5% of ages and 8% of salaries are NULL (an
unquoted empty field, as COPY writes NULL); a few names hold a comma or a
quote so the CSV quoting is exercised.
"""
import csv
import random
import sys

FIRST = ["Aroha", "Ben", "Chloe", "Daniel", "Emma", "Finn", "Grace", "Hemi", "Isla",
         "Jack", "Kiri", "Liam", "Mia", "Noah", "Olivia", "Oscar", "Ruby", "Sam",
         "Tama", "Wiremu", "Zoe", "Anahera", "Lucas", "Charlotte"]
LAST = ["Smith", "Williams", "Brown", "Wilson", "Taylor", "Ngata", "Walker", "Parata",
        "Clark", "Tane", "Harris", "King", "Martin", "O'Brien", "Thompson", "Young"]
CITIES = ["Auckland", "Wellington", "Christchurch", "Hamilton", "Tauranga", "Dunedin",
          "Nelson", "Napier", "Rotorua", "Invercargill", "Whangarei", "Queenstown"]


def main():
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    rng = random.Random(20170912)
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["id", "name", "city", "age", "salary"])
    for i in range(1, rows + 1):
        r = rng.random()
        if r < 0.03:
            name = None
        elif r < 0.05:
            name = "%s, %s" % (rng.choice(LAST), rng.choice(FIRST))
        else:
            name = "%s %s" % (rng.choice(FIRST), rng.choice(LAST))
        city = rng.choice(CITIES)
        age = None if rng.random() < 0.05 else rng.randint(18, 70)
        salary = None if rng.random() < 0.08 else round(rng.uniform(35000, 180000), 2)
        # None -> unquoted empty field (NULL); strings quoted only when needed
        out.writerow([i, "" if name is None else name, city,
                      "" if age is None else age, "" if salary is None else "%.2f" % salary])


if __name__ == "__main__":
    main()
