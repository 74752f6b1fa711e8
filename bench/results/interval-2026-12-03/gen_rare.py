# gen_rare.py: 4,000 point statements on the 2,000 rows of
# ../interval-2026-12-02/setup.sql, 4 % of them UPDATEs among SELECTs;
# writes rare.sql and rare-kinds.txt (0 SELECT, 2 UPDATE).
import random
random.seed(3)
sql, kinds = [], []
for i in range(4000):
    k = 2 if random.random() < 0.04 else 0
    r = random.randrange(2000)
    sql.append("UPDATE t SET v = 'u' WHERE id = %d;" % r if k == 2 else
               "SELECT * FROM t WHERE id = %d;" % r)
    kinds.append(str(k))
open("rare.sql", "w").write("\n".join(sql) + "\n")
open("rare-kinds.txt", "w").write("\n".join(kinds) + "\n")
