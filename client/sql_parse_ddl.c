/*
 * sql_parse_ddl.c - CREATE TABLE, CREATE INDEX, DROP TABLE, INSERT, UPDATE
 * and DELETE into struct sql_stmt.
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql_parse_int.h"

/* ---- statements ------------------------------------------------------------- */

/* A column type: INT INTEGER INT4 SMALLINT | BIGINT INT8 | FLOAT FLOAT8
 * REAL DOUBLE PRECISION | TEXT [(n)] | VARCHAR [(n)] | CHARACTER VARYING
 * [(n)]. */
int sqp_column_type(struct tx *x, const PgQuery__TypeName *t, struct sql_coldef *c)
{
	const char *name = NULL;
	int has_len = 0;

	if (t->n_names == 2 && sqp_str_of(t->names[0]) != NULL &&
	    strcmp(sqp_str_of(t->names[0]), "pg_catalog") == 0)
		name = sqp_str_of(t->names[1]);
	else if (t->n_names == 1)
		name = sqp_str_of(t->names[0]);
	if (name == NULL)
		return sqp_unsupported(x, t->location, "qualified type names");
	if (t->n_array_bounds > 0)
		return sqp_unsupported(x, t->location, "arrays");
	if (strcmp(name, "int4") == 0 || strcmp(name, "int2") == 0 || strcmp(name, "int") == 0 ||
	    strcmp(name, "integer") == 0 || strcmp(name, "smallint") == 0) {
		c->type = SQL_CT_INT;
	} else if (strcmp(name, "int8") == 0 || strcmp(name, "bigint") == 0) {
		c->type = SQL_CT_BIGINT;
	} else if (strcmp(name, "float8") == 0 || strcmp(name, "float4") == 0 ||
		   strcmp(name, "float") == 0 || strcmp(name, "real") == 0) {
		c->type = SQL_CT_FLOAT;
	} else if (strcmp(name, "text") == 0 || strcmp(name, "varchar") == 0) {
		c->type = SQL_CT_TEXT;
		has_len = 1;
	} else {
		char q[160];

		sql_quote_text(q, sizeof(q), name, strlen(name), 40);
		return sqp_fail(x, t->location, "type \"%s\" does not exist", q);
	}
	if (t->n_typmods > 0) {
		const Node *m = t->typmods[0];
		const PgQuery__AConst *k = m->node_case == PG_QUERY__NODE__NODE_A_CONST ? m->a_const
										: NULL;
		int64_t v;

		if (!has_len && c->type == SQL_CT_FLOAT && t->n_names == 2 && t->n_typmods == 1) {
			/* FLOAT(p): PostgreSQL's grammar already chose float4 or float8 */
			return 0;
		}
		if (!has_len || t->n_typmods != 1 || k == NULL || k->isnull)
			return sqp_fail(x, t->location, "type modifier is not allowed for type \"%s\"", name);
		if (k->val_case == PG_QUERY__A__CONST__VAL_IVAL)
			v = k->ival != NULL ? k->ival->ival : 0;
		else if (k->val_case == PG_QUERY__A__CONST__VAL_FVAL)
			v = 10485761;
		else
			return sqp_fail(x, k->location, "type modifiers must be simple constants or identifiers");
		if (v < 1)
			return sqp_fail(x, k->location, "length for type varchar must be at least 1");
		if (v > 10485760)
			return sqp_fail(x, k->location, "length for type varchar cannot exceed 10485760");
		c->max_len = (uint32_t)v;
	}
	return 0;
}

int sqp_create_table(struct tx *x, const PgQuery__CreateStmt *cs, struct sql_stmt *st)
{
	size_t i, j, k, ncol = 0;
	int npk = 0, pk2 = -1;

	st->kind = SQL_CREATE_TABLE;
	st->if_not_exists = cs->if_not_exists;
	if (sqp_table_name(x, cs->relation, st->table, &st->table_pos) != 0)
		return -1;
	if (cs->n_inh_relations > 0)
		return sqp_unsupported(x, sqp_node_pos(cs->inh_relations[0]), "INHERITS");
	if (cs->partspec != NULL || cs->partbound != NULL)
		return sqp_unsupported(x, cs->relation->location, "partitioned tables");
	if (cs->of_typename != NULL)
		return sqp_unsupported(x, cs->relation->location, "typed tables (OF)");
	if (cs->n_options > 0)
		return sqp_unsupported(x, cs->relation->location, "storage parameters (WITH)");
	if (cs->tablespacename != NULL && cs->tablespacename[0] != '\0')
		return sqp_unsupported(x, cs->relation->location, "TABLESPACE");
	if (cs->oncommit > PG_QUERY__ON_COMMIT_ACTION__ONCOMMIT_NOOP)
		return sqp_unsupported(x, cs->relation->location, "ON COMMIT");
	for (i = 0; i < cs->n_table_elts; i++)
		ncol += cs->table_elts[i]->node_case == PG_QUERY__NODE__NODE_COLUMN_DEF;
	if (ncol == 0)
		return sqp_fail(x, st->table_pos, "table \"%s\" has no columns", st->table);
	if ((st->cols = sqp_talloc(x, ncol * sizeof(*st->cols))) == NULL)
		return -1;
	/* columns first: a table constraint may name a later column */
	for (i = 0; i < cs->n_table_elts; i++) {
		const Node *el = cs->table_elts[i];
		const PgQuery__ColumnDef *cd;
		struct sql_coldef *c;
		int explicit_null = 0;

		if (el->node_case != PG_QUERY__NODE__NODE_COLUMN_DEF)
			continue;
		cd = el->column_def;
		c = &st->cols[st->ncols++];
		c->pos = cd->location;
		if (sqp_take(x, cd->colname, c->name, cd->location) != 0 ||
		    sqp_column_type(x, cd->type_name, c) != 0)
			return -1;
		if (cd->coll_clause != NULL)
			return sqp_unsupported(x, cd->coll_clause->location, "COLLATE");
		for (j = 0; j < cd->n_constraints; j++) {
			const PgQuery__Constraint *k2 = cd->constraints[j]->constraint;

			if (cd->constraints[j]->node_case != PG_QUERY__NODE__NODE_CONSTRAINT)
				return sqp_node_unsupported(x, cd->constraints[j], cd->location);
			switch (k2->contype) {
			case PG_QUERY__CONSTR_TYPE__CONSTR_PRIMARY:
				c->primary_key = c->not_null = 1;
				if (++npk == 2)
					pk2 = k2->location;
				break;
			case PG_QUERY__CONSTR_TYPE__CONSTR_NOTNULL:
				c->not_null = 1;
				break;
			case PG_QUERY__CONSTR_TYPE__CONSTR_NULL:
				explicit_null = 1;
				break;
			case PG_QUERY__CONSTR_TYPE__CONSTR_UNIQUE:
				c->unique = 1;
				break;
			case PG_QUERY__CONSTR_TYPE__CONSTR_DEFAULT:
				return sqp_unsupported(x, k2->location, "DEFAULT");
			case PG_QUERY__CONSTR_TYPE__CONSTR_CHECK:
				return sqp_unsupported(x, k2->location, "CHECK constraints");
			case PG_QUERY__CONSTR_TYPE__CONSTR_FOREIGN:
				return sqp_unsupported(x, k2->location, "REFERENCES (foreign keys)");
			case PG_QUERY__CONSTR_TYPE__CONSTR_IDENTITY:
			case PG_QUERY__CONSTR_TYPE__CONSTR_GENERATED:
				return sqp_unsupported(x, k2->location, "generated columns");
			default:
				return sqp_unsupported(x, k2->location, "this column constraint");
			}
			if (k2->conname != NULL && k2->conname[0] != '\0')
				return sqp_unsupported(x, k2->location, "named constraints");
			if (explicit_null && c->not_null)
				return sqp_fail(x, k2->location, "conflicting NULL/NOT NULL declarations "
					    "for column \"%s\" of table \"%s\"", c->name, st->table);
		}
	}
	for (i = 0; i < cs->n_table_elts; i++) {
		const Node *el = cs->table_elts[i];
		const PgQuery__Constraint *k2;
		const char *name;
		int primary;

		if (el->node_case == PG_QUERY__NODE__NODE_COLUMN_DEF)
			continue;
		if (el->node_case != PG_QUERY__NODE__NODE_CONSTRAINT)
			return sqp_node_unsupported(x, el, st->table_pos);
		k2 = el->constraint;
		if (k2->contype != PG_QUERY__CONSTR_TYPE__CONSTR_PRIMARY &&
		    k2->contype != PG_QUERY__CONSTR_TYPE__CONSTR_UNIQUE) {
			return sqp_unsupported(x, k2->location,
					   k2->contype == PG_QUERY__CONSTR_TYPE__CONSTR_CHECK ?
					   "CHECK constraints" :
					   k2->contype == PG_QUERY__CONSTR_TYPE__CONSTR_FOREIGN ?
					   "FOREIGN KEY constraints" : "this table constraint");
		}
		primary = k2->contype == PG_QUERY__CONSTR_TYPE__CONSTR_PRIMARY;
		if (k2->n_keys > 1)
			return sqp_unsupported(x, k2->location, primary ?
					   "multi-column PRIMARY KEY constraints" :
					   "multi-column UNIQUE constraints");
		if (k2->n_keys != 1 || (name = sqp_str_of(k2->keys[0])) == NULL)
			return sqp_unsupported(x, k2->location, "this table constraint");
		if (primary && ++npk == 2)
			pk2 = k2->location;
		for (k = 0; k < st->ncols; k++)
			if (strcmp(st->cols[k].name, name) == 0)
				break;
		if (k == st->ncols)
			return sqp_fail(x, sqp_find_name(x, (size_t)k2->location, name, k2->location),
				    "column \"%s\" named in key does not exist", name);
		if (primary)
			st->cols[k].primary_key = st->cols[k].not_null = 1;
		else
			st->cols[k].unique = 1;
	}
	if (npk > 1)
		return sqp_fail(x, pk2, "multiple primary keys for table \"%s\" are not allowed",
			    st->table);
	{
		int epos = -1, rc = sql_check_create(x->ar, st, x->err, x->errlen, &epos);

		if (rc != LWC_OK) {
			if (rc == LWC_ERR_NOMEM)
				return sqp_fail_nomem(x);
			x->rc = LWC_ERR_ARG;
			x->errpos = epos;
			return -1;
		}
	}
	return 0;
}

/* REINDEX TABLE t: the client rebuilds the table's range indexes (those
 * of its PRIMARY KEY and UNIQUE columns made before range indexes existed,
 * and any whose build did not finish).  Other forms name what LWC does not
 * keep (index names, schemas, the database). */
int sqp_reindex(struct tx *x, const PgQuery__ReindexStmt *rs, int pos, struct sql_stmt *st)
{
	if (rs->kind != PG_QUERY__REINDEX_OBJECT_TYPE__REINDEX_OBJECT_TABLE || rs->relation == NULL)
		return sqp_unsupported(x, pos, rs->kind == PG_QUERY__REINDEX_OBJECT_TYPE__REINDEX_OBJECT_INDEX
				       ? "REINDEX INDEX" : "REINDEX of a schema or database");
	if (rs->n_params > 0)
		return sqp_unsupported(x, pos, "REINDEX options");
	st->kind = SQL_REINDEX;
	return sqp_table_name(x, rs->relation, st->table, &st->table_pos);
}

int sqp_create_index(struct tx *x, const PgQuery__IndexStmt *is, struct sql_stmt *st)
{
	size_t i, n = is->n_index_params;

	st->kind = SQL_CREATE_INDEX;
	st->unique = is->unique;
	st->if_not_exists = is->if_not_exists;
	if (is->idxname != NULL && is->idxname[0] != '\0' &&
	    sqp_take(x, is->idxname, st->index, is->relation->location) != 0)
		return -1;
	if (sqp_table_name(x, is->relation, st->table, &st->table_pos) != 0)
		return -1;
	if (is->where_clause != NULL)
		return sqp_unsupported(x, sqp_node_pos(is->where_clause), "partial indexes (WHERE)");
	if (is->n_index_including_params > 0)
		return sqp_unsupported(x, st->table_pos, "INCLUDE");
	if (is->concurrent)
		return sqp_unsupported(x, st->table_pos, "CONCURRENTLY");
	if (is->n_options > 0)
		return sqp_unsupported(x, st->table_pos, "storage parameters (WITH)");
	if (is->nulls_not_distinct)
		return sqp_unsupported(x, st->table_pos, "NULLS NOT DISTINCT");
	if ((st->index_cols = sqp_talloc(x, n * sizeof(*st->index_cols))) == NULL ||
	    (st->index_col_pos = sqp_talloc(x, n * sizeof(*st->index_col_pos))) == NULL ||
	    (st->index_col_index = sqp_talloc(x, n * sizeof(*st->index_col_index))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		const Node *p = is->index_params[i];
		const PgQuery__IndexElem *ie;

		if (p->node_case != PG_QUERY__NODE__NODE_INDEX_ELEM)
			return sqp_node_unsupported(x, p, st->table_pos);
		ie = p->index_elem;
		if (ie->expr != NULL)
			return sqp_unsupported(x, sqp_node_pos(ie->expr) >= 0 ? sqp_node_pos(ie->expr) :
					   st->table_pos, "indexes on expressions");
		if (ie->n_collation > 0 || ie->n_opclass > 0)
			return sqp_unsupported(x, st->table_pos, "index operator classes and collations");
		/* IndexElem has no location: the column's first mention after ON */
		if (sqp_take(x, ie->name, st->index_cols[i], st->table_pos) != 0)
			return -1;
		st->index_col_pos[i] = sqp_find_name(x, i > 0 ? (size_t)st->index_col_pos[i - 1] + 1 :
						 (size_t)st->table_pos + strlen(st->table),
						 st->index_cols[i], st->table_pos);
		st->index_col_index[i] = -1;
	}
	st->nindex_cols = n;
	return 0;
}

int sqp_drop(struct tx *x, const PgQuery__DropStmt *ds, int pos, struct sql_stmt *st)
{
	const Node *o;
	const char *name;

	if (ds->remove_type != PG_QUERY__OBJECT_TYPE__OBJECT_TABLE) {
		const char *what = "DROP of this kind of object";

		switch (ds->remove_type) {
		case PG_QUERY__OBJECT_TYPE__OBJECT_INDEX: what = "DROP INDEX"; break;
		case PG_QUERY__OBJECT_TYPE__OBJECT_VIEW: what = "DROP VIEW"; break;
		case PG_QUERY__OBJECT_TYPE__OBJECT_SCHEMA: what = "DROP SCHEMA"; break;
		case PG_QUERY__OBJECT_TYPE__OBJECT_SEQUENCE: what = "DROP SEQUENCE"; break;
		case PG_QUERY__OBJECT_TYPE__OBJECT_FUNCTION: what = "DROP FUNCTION"; break;
		default: break;
		}
		return sqp_unsupported(x, pos, what);
	}
	st->kind = SQL_DROP_TABLE;
	st->if_exists = ds->missing_ok;
	if (ds->n_objects != 1)
		return sqp_unsupported(x, pos, "dropping several tables in one statement");
	if (ds->behavior == PG_QUERY__DROP_BEHAVIOR__DROP_CASCADE)
		return sqp_unsupported(x, pos, "CASCADE");
	o = ds->objects[0];
	if (o->node_case != PG_QUERY__NODE__NODE_LIST || o->list->n_items != 1 ||
	    (name = sqp_str_of(o->list->items[0])) == NULL)
		return sqp_unsupported(x, pos, "schema-qualified table names");
	/* the name's offset: DropStmt has none; the last word of the text */
	st->table_pos = pos;
	return sqp_take(x, name, st->table, pos);
}

/* SELECT pieces LWC does not run, named. */
int sqp_insert_stmt(struct tx *x, const PgQuery__InsertStmt *is, int pos, struct sql_stmt *st)
{
	const PgQuery__SelectStmt *s;
	size_t i, j;

	st->kind = SQL_INSERT;
	if (is->with_clause != NULL)
		return sqp_unsupported(x, is->with_clause->location, "WITH");
	if (is->on_conflict_clause != NULL)
		return sqp_unsupported(x, is->on_conflict_clause->location, "ON CONFLICT");
	if (is->n_returning_list > 0)
		return sqp_unsupported(x, sqp_node_pos(is->returning_list[0]), "RETURNING");
	if (is->override > PG_QUERY__OVERRIDING_KIND__OVERRIDING_NOT_SET)
		return sqp_unsupported(x, pos, "OVERRIDING");
	if (sqp_table_name(x, is->relation, st->table, &st->table_pos) != 0)
		return -1;
	if (is->relation->alias != NULL)
		return sqp_unsupported(x, is->relation->location, "table aliases");
	if (is->n_cols > 0) {
		if ((st->insert_cols = sqp_talloc(x, is->n_cols * sizeof(*st->insert_cols))) == NULL ||
		    (st->insert_col_pos = sqp_talloc(x, is->n_cols * sizeof(*st->insert_col_pos))) == NULL)
			return -1;
		for (i = 0; i < is->n_cols; i++) {
			const PgQuery__ResTarget *rt = is->cols[i]->res_target;

			if (rt->n_indirection > 0)
				return sqp_unsupported(x, rt->location, "subscripts and field selection");
			if (sqp_take(x, rt->name, st->insert_cols[i], rt->location) != 0)
				return -1;
			st->insert_col_pos[i] = rt->location;
		}
		st->ninsert_cols = is->n_cols;
	}
	if (is->select_stmt == NULL)
		return sqp_unsupported(x, pos, "DEFAULT VALUES");
	if (is->select_stmt->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
		return sqp_node_unsupported(x, is->select_stmt, pos);
	s = is->select_stmt->select_stmt;
	if (s->n_values_lists == 0) {
		/* INSERT ... SELECT * FROM src */
		if (sqp_select_plain(x, s, pos) != 0)
			return -1;
		if (s->n_target_list != 1 || !sqp_is_star(s->target_list[0]->res_target->val) ||
		    s->where_clause != NULL || s->n_sort_clause > 0 || s->limit_count != NULL)
			return sqp_unsupported(x, s->n_target_list > 0 ? sqp_node_pos(s->target_list[0]) : pos,
					   "INSERT ... SELECT other than SELECT * FROM table");
		return sqp_table_name(x, s->from_clause[0]->range_var, st->src, &st->src_pos);
	}
	if (s->with_clause != NULL || s->n_sort_clause > 0 || s->limit_count != NULL ||
	    s->limit_offset != NULL)
		return sqp_unsupported(x, pos, "ORDER BY, LIMIT or WITH on VALUES");
	st->nrows = s->n_values_lists;
	if ((st->rows = sqp_talloc(x, st->nrows * sizeof(*st->rows))) == NULL)
		return -1;
	for (i = 0; i < st->nrows; i++) {
		const Node *r = s->values_lists[i];
		const PgQuery__List *l;

		if (r->node_case != PG_QUERY__NODE__NODE_LIST)
			return sqp_fail(x, pos, "malformed VALUES");
		l = r->list;
		if (i == 0)
			st->rowlen = l->n_items;
		else if (l->n_items != st->rowlen)
			return sqp_fail(x, l->n_items > 0 ? sqp_node_pos(l->items[0]) : pos,
				    "VALUES lists must all be the same length");
		if ((st->rows[i] = sqp_talloc(x, st->rowlen * sizeof(**st->rows))) == NULL)
			return -1;
		for (j = 0; j < l->n_items; j++) {
			if (l->items[j]->node_case == PG_QUERY__NODE__NODE_SET_TO_DEFAULT)
				return sqp_unsupported(x, sqp_node_pos(l->items[j]), "DEFAULT");
			if ((st->rows[i][j] = sqp_constant_expr(x, l->items[j], "VALUES")) == NULL)
				return -1;
		}
	}
	return 0;
}

int sqp_update_stmt(struct tx *x, const PgQuery__UpdateStmt *us, int pos, struct sql_stmt *st)
{
	size_t i;

	(void)pos;
	st->kind = SQL_UPDATE;
	if (us->with_clause != NULL)
		return sqp_unsupported(x, us->with_clause->location, "WITH");
	if (us->n_from_clause > 0)
		return sqp_unsupported(x, sqp_node_pos(us->from_clause[0]), "UPDATE ... FROM");
	if (us->n_returning_list > 0)
		return sqp_unsupported(x, sqp_node_pos(us->returning_list[0]), "RETURNING");
	if (sqp_table_name(x, us->relation, st->table, &st->table_pos) != 0)
		return -1;
	memcpy(x->tname, st->table, sizeof(x->tname));
	if (us->relation->alias != NULL)
		return sqp_unsupported(x, us->relation->location, "table aliases");
	st->nsets = us->n_target_list;
	if ((st->sets = sqp_talloc(x, st->nsets * sizeof(*st->sets))) == NULL)
		return -1;
	for (i = 0; i < st->nsets; i++) {
		const PgQuery__ResTarget *rt = us->target_list[i]->res_target;
		struct sql_set *s = &st->sets[i];

		if (rt->n_indirection > 0)
			return sqp_unsupported(x, rt->location, "subscripts and field selection");
		if (rt->val != NULL && rt->val->node_case == PG_QUERY__NODE__NODE_MULTI_ASSIGN_REF)
			return sqp_unsupported(x, rt->location, "multiple-column assignment");
		if (rt->val != NULL && rt->val->node_case == PG_QUERY__NODE__NODE_SET_TO_DEFAULT)
			return sqp_unsupported(x, sqp_node_pos(rt->val), "DEFAULT");
		s->col_index = -1;
		s->pos = rt->location;
		if (sqp_take(x, rt->name, s->col, rt->location) != 0 ||
		    (s->value = sqp_value(x, rt->val, "SET")) == NULL)
			return -1;
	}
	if (us->where_clause != NULL && (st->where = sqp_cond(x, us->where_clause, "WHERE")) == NULL)
		return -1;
	return 0;
}

int sqp_delete_stmt(struct tx *x, const PgQuery__DeleteStmt *ds, struct sql_stmt *st)
{
	st->kind = SQL_DELETE;
	if (ds->with_clause != NULL)
		return sqp_unsupported(x, ds->with_clause->location, "WITH");
	if (ds->n_using_clause > 0)
		return sqp_unsupported(x, sqp_node_pos(ds->using_clause[0]), "DELETE ... USING");
	if (ds->n_returning_list > 0)
		return sqp_unsupported(x, sqp_node_pos(ds->returning_list[0]), "RETURNING");
	if (sqp_table_name(x, ds->relation, st->table, &st->table_pos) != 0)
		return -1;
	memcpy(x->tname, st->table, sizeof(x->tname));
	if (ds->relation->alias != NULL)
		return sqp_unsupported(x, ds->relation->location, "table aliases");
	if (ds->where_clause != NULL && (st->where = sqp_cond(x, ds->where_clause, "WHERE")) == NULL)
		return -1;
	return 0;
}
