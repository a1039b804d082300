//! The query generator: random, well-typed SELECTs over the fuzz schema (`schema.sql`), each
//! tagged with the constructs it uses. Deterministic: the same seed gives the same queries.

use std::collections::BTreeSet;

/// The value types the generator works with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum T {
    I4,
    I8,
    Num,
    F8,
    Text,
    Bool,
    Date,
    Jsonb,
    Json,
    I4Arr,
}

const ALL: [T; 10] = [
    T::I4,
    T::I8,
    T::Num,
    T::F8,
    T::Text,
    T::Bool,
    T::Date,
    T::Jsonb,
    T::Json,
    T::I4Arr,
];

impl T {
    fn sql(self) -> &'static str {
        match self {
            T::I4 => "int4",
            T::I8 => "int8",
            T::Num => "numeric",
            T::F8 => "float8",
            T::Text => "text",
            T::Bool => "bool",
            T::Date => "date",
            T::Jsonb => "jsonb",
            T::Json => "json",
            T::I4Arr => "int4[]",
        }
    }

    /// Has an equality operator (GROUP BY, DISTINCT, UNION, `=`).
    fn equality(self) -> bool {
        self != T::Json
    }

    /// Has a btree ordering (ORDER BY, `<`, min/max).
    fn ordered(self) -> bool {
        !matches!(self, T::Json | T::Jsonb | T::Bool)
    }

    fn integer_family(self) -> bool {
        matches!(self, T::I4 | T::I8 | T::Num)
    }
}

/// A relation in scope: its alias and columns.
#[derive(Debug, Clone)]
pub(super) struct Rel {
    alias: String,
    cols: Vec<(String, T)>,
    /// A function returning a scalar: its whole row is that value, without fields.
    scalar: bool,
}

const TABLES: &[(&str, &[(&str, T)])] = &[
    (
        "fa",
        &[
            ("id", T::I4),
            ("n", T::I4),
            ("t", T::Text),
            ("b", T::Bool),
            ("x", T::Num),
            ("k", T::I4),
            ("s", T::Text),
        ],
    ),
    (
        "fb",
        &[
            ("id", T::I4),
            ("a_id", T::I4),
            ("n", T::I8),
            ("t", T::Text),
            ("f", T::F8),
            ("d", T::Date),
        ],
    ),
    (
        "fc",
        &[
            ("id", T::I4),
            ("b_id", T::I4),
            ("t", T::Text),
            ("j", T::Jsonb),
            ("arr", T::I4Arr),
        ],
    ),
    ("fe", &[("id", T::I4), ("v", T::I4), ("w", T::Text)]),
    (
        "fk",
        &[
            ("id", T::I4),
            ("interval", T::Text),
            ("value", T::I4),
            ("position", T::I4),
            ("type", T::Text),
            ("year", T::I8),
            ("level", T::Num),
            ("time", T::Date),
        ],
    ),
];

/// Keywords PostgreSQL lets a table alias or a select-list label be without `AS`.
const BARE_KEYWORD_LABELS: &[&str] = &["value", "level", "type", "position", "interval"];

/// A generated query and the constructs it uses.
pub(super) struct Query {
    pub(super) sql: String,
    pub(super) tags: BTreeSet<&'static str>,
}

/// The generator's state: the random stream, the tags of the query being built, the CTEs in
/// scope and a counter for fresh aliases.
pub(super) struct Gen {
    state: u64,
    tags: BTreeSet<&'static str>,
    ctes: Vec<Rel>,
    next: usize,
}

/// Deepest query nesting (derived tables, subqueries, CTE bodies).
const MAX_DEPTH: u32 = 2;
/// Deepest expression nesting.
const MAX_EXPR: u32 = 3;

impl Gen {
    pub(super) fn new(seed: u64) -> Self {
        Gen {
            // Note: xorshift must not start at 0.
            state: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            tags: BTreeSet::new(),
            ctes: Vec::new(),
            next: 0,
        }
    }

    /// xorshift64*.
    fn next_u64(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next_u64() % n as u64).expect("below n, a usize")
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    fn pick<'a, X>(&mut self, xs: &'a [X]) -> &'a X {
        &xs[self.below(xs.len())]
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }

    fn tag(&mut self, t: &'static str) {
        self.tags.insert(t);
    }

    /// The next query.
    pub(super) fn query(&mut self) -> Query {
        self.tags.clear();
        self.ctes.clear();
        self.next = 0;
        let sql = match self.below(100) {
            0..6 => self.keyword_statement(),
            6..12 => self.locking_statement(),
            _ => self.statement(0, None, &[]).0,
        };
        Query {
            sql,
            tags: std::mem::take(&mut self.tags),
        }
    }

    /// A SELECT over the table whose columns are named by keywords, written bare: in the
    /// select list (with and without a qualifier, with a keyword label), WHERE, GROUP BY and
    /// ORDER BY, the table aliased by a keyword or not.
    fn keyword_statement(&mut self) -> String {
        self.tag("keyword-names");
        let cols = TABLES
            .iter()
            .find(|(name, _)| *name == "fk")
            .expect("the keyword table")
            .1;
        let alias = *self.pick(&["", "fk", "level", "value", "k"]);
        let from = match alias {
            "" => "fk".to_string(),
            a if self.chance(50) => format!("fk AS {a}"),
            a => format!("fk {a}"),
        };
        let qualifier = if alias.is_empty() { "fk" } else { alias };
        let column = |g: &mut Self, c: &str| {
            if g.chance(50) {
                c.to_string()
            } else {
                format!("{qualifier}.{c}")
            }
        };
        let grouped = self.chance(25);
        let mut items = Vec::new();
        let mut keys = Vec::new();
        for i in 0..1 + self.below(3) {
            let (c, _) = *self.pick(cols);
            let e = column(self, c);
            let label = match self.below(4) {
                0 => String::new(),
                1 => format!(" AS {}", self.pick(&["year", "interval", "value", "time"])),
                2 => format!(" {}", self.pick(BARE_KEYWORD_LABELS)),
                _ => format!(" AS c{i}"),
            };
            if grouped && self.chance(40) {
                items.push(format!("count({e}){label}"));
            } else {
                keys.push(e.clone());
                items.push(format!("{e}{label}"));
            }
        }
        let mut sql = format!("SELECT {} FROM {from}", items.join(", "));
        if self.chance(50) {
            let (c, t) = *self.pick(cols);
            let e = column(self, c);
            let test = if self.chance(50) {
                format!("{e} IS NOT NULL")
            } else {
                format!("{e} = {}", self.literal(t))
            };
            sql.push_str(&format!(" WHERE {test}"));
        }
        if grouped && !keys.is_empty() {
            sql.push_str(&format!(" GROUP BY {}", keys.join(", ")));
        }
        if self.chance(40) {
            let key = match keys.first() {
                Some(k) => k.clone(),
                None => "1".into(),
            };
            sql.push_str(&format!(" ORDER BY {key}"));
        }
        sql
    }

    /// A SELECT over one table with one or two locking clauses of every strength, with or
    /// without OF, NOWAIT or SKIP LOCKED, before or after LIMIT and OFFSET.
    fn locking_statement(&mut self) -> String {
        self.tag("locking");
        let (name, cols) = *self.pick(TABLES);
        let alias = self.fresh("t");
        let rel = Rel {
            alias: alias.clone(),
            cols: cols.iter().map(|(c, t)| (c.to_string(), *t)).collect(),
            scalar: false,
        };
        let tys: Vec<T> = (0..1 + self.below(3)).map(|_| *self.pick(&ALL)).collect();
        let items: Vec<String> = tys
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                format!(
                    "{} AS c{i}",
                    self.expr(std::slice::from_ref(&rel), t, MAX_DEPTH, 1)
                )
            })
            .collect();
        let mut sql = format!("SELECT {} FROM {name} {alias}", items.join(", "));
        if self.chance(40) {
            let w = self.boolean(std::slice::from_ref(&rel), MAX_DEPTH, 1);
            sql.push_str(&format!(" WHERE {w}"));
        }
        if tys[0].ordered() && self.chance(40) {
            sql.push_str(" ORDER BY 1");
        }
        let mut locks = String::new();
        for _ in 0..1 + self.below(2) {
            let strength = *self.pick(&["UPDATE", "NO KEY UPDATE", "SHARE", "KEY SHARE"]);
            let of = if self.chance(40) {
                format!(" OF {alias}")
            } else {
                String::new()
            };
            let wait = *self.pick(&["", " NOWAIT", " SKIP LOCKED"]);
            locks.push_str(&format!(" FOR {strength}{of}{wait}"));
        }
        let limit = *self.pick(&["", " LIMIT 2", " OFFSET 1", " LIMIT 2 OFFSET 1"]);
        if !limit.is_empty() && self.chance(50) {
            self.tag("lock-before-limit");
            sql.push_str(&format!("{locks}{limit}"));
        } else {
            sql.push_str(&format!("{limit}{locks}"));
        }
        sql
    }

    /// A SELECT, possibly with a CTE and a set operation; its column types.
    fn statement(&mut self, depth: u32, want: Option<&[T]>, outer: &[Rel]) -> (String, Vec<T>) {
        let saved = self.ctes.len();
        let mut prefix = String::new();
        if depth < MAX_DEPTH && self.chance(20) {
            self.tag("cte");
            let (body, tys) = self.core(depth + 1, None, &[], true);
            let name = self.fresh("w");
            prefix = format!("WITH {name} AS ({body}) ");
            self.ctes.push(Rel {
                alias: name,
                cols: numbered(&tys),
                scalar: false,
            });
        }
        let set_operation = self.chance(12);
        let (mut sql, mut tys) = self.core(depth, want, outer, !set_operation);
        if set_operation {
            let op = if tys.iter().all(|t| t.equality()) {
                *self.pick(&["UNION", "UNION ALL", "INTERSECT", "EXCEPT"])
            } else {
                "UNION ALL"
            };
            self.tag(match op {
                "UNION" => "union",
                "UNION ALL" => "union-all",
                "INTERSECT" => "intersect",
                _ => "except",
            });
            let other: Vec<T> = tys
                .iter()
                .map(|&t| {
                    if t.integer_family() && self.chance(30) {
                        *self.pick(&[T::I4, T::I8, T::Num])
                    } else {
                        t
                    }
                })
                .collect();
            let (right, right_tys) = self.core(depth, Some(&other), outer, false);
            sql = format!("{sql} {op} {right}");
            tys = tys
                .iter()
                .zip(&right_tys)
                .map(|(&a, &b)| common(a, b))
                .collect();
        }
        self.ctes.truncate(saved);
        (format!("{prefix}{sql}"), tys)
    }

    /// One SELECT without set operations. `tail` allows ORDER BY and LIMIT.
    fn core(
        &mut self,
        depth: u32,
        want: Option<&[T]>,
        outer: &[Rel],
        tail: bool,
    ) -> (String, Vec<T>) {
        let (from, inner) = self.from(depth, outer);
        let mut visible = inner.clone();
        visible.extend(outer.iter().cloned());
        let tys: Vec<T> = match want {
            Some(w) => w.to_vec(),
            None => (0..1 + self.below(4)).map(|_| *self.pick(&ALL)).collect(),
        };
        let mode = self.below(100);
        let mut items = Vec::new();
        let mut clauses = String::new();
        if mode < 25 {
            // Aggregate query: grouped columns and aggregates.
            self.tag("aggregate");
            let cols: Vec<(String, T)> = inner
                .iter()
                .flat_map(|r| {
                    r.cols
                        .iter()
                        .filter(|(_, t)| t.equality())
                        .map(|(c, t)| (format!("{}.{c}", r.alias), *t))
                })
                .collect();
            let mut keys: Vec<(String, T)> = Vec::new();
            if !cols.is_empty() {
                for _ in 0..self.below(3) {
                    keys.push(self.pick(&cols).clone());
                }
            }
            for &t in &tys {
                let key = keys.iter().find(|(_, k)| *k == t).cloned();
                match key {
                    Some((k, _)) if self.chance(50) => items.push(k),
                    _ => items.push(self.aggregate(&inner, t, depth)),
                }
            }
            if self.chance(25) {
                self.tag("aggregate-empty-input");
                clauses.push_str(" WHERE false");
            } else if self.chance(40) {
                let w = self.boolean(&visible, depth, 0);
                clauses.push_str(&format!(" WHERE {w}"));
            }
            if !keys.is_empty() {
                self.tag("group-by");
                let list: Vec<&str> = keys.iter().map(|(k, _)| k.as_str()).collect();
                let list = list.join(", ");
                // Note: ROLLUP, CUBE and GROUPING SETS make a key NULL in the rows of the
                // sets that leave it out.
                let grouping = match self.below(10) {
                    0 => format!("ROLLUP ({list})"),
                    1 => format!("CUBE ({list})"),
                    2 => format!("GROUPING SETS (({list}), ())"),
                    _ => list,
                };
                if grouping.contains('(') {
                    self.tag("grouping-sets");
                }
                clauses.push_str(&format!(" GROUP BY {grouping}"));
            }
            if self.chance(15) {
                self.tag("having");
                let h = self.aggregate(&inner, T::Bool, depth);
                clauses.push_str(&format!(" HAVING {h}"));
            }
        } else {
            let window = mode < 40;
            for &t in &tys {
                if window && self.chance(60) {
                    items.push(self.window(&visible, &inner, t, depth));
                } else {
                    items.push(self.expr(&visible, t, depth, 0));
                }
            }
            if self.chance(50) {
                let w = self.boolean(&visible, depth, 0);
                clauses.push_str(&format!(" WHERE {w}"));
            }
        }
        let distinct = mode >= 25 && tys.iter().all(|t| t.equality()) && self.chance(8);
        if distinct {
            self.tag("distinct");
        }
        if tail && tys[0].ordered() && self.chance(25) {
            self.tag("order-by");
            clauses.push_str(" ORDER BY 1");
            if self.chance(50) {
                self.tag("limit");
                clauses.push_str(" LIMIT 2");
            }
        }
        let mut list: Vec<String> = items
            .iter()
            .enumerate()
            .map(|(i, e)| format!("{e} AS c{i}"))
            .collect();
        if depth == 0 && tail && mode >= 25 && self.chance(10) {
            // Note: an extra record column, at the top only (no one reads it by position).
            self.tag("row-constructor");
            let fields: Vec<String> = (0..2 + self.below(2))
                .map(|_| {
                    let t = *self.pick(&ALL);
                    self.expr(&visible, t, depth, 1)
                })
                .collect();
            list.push(format!("({}) AS r", fields.join(", ")));
        }
        let sql = format!(
            "SELECT {}{} FROM {from}{clauses}",
            if distinct { "DISTINCT " } else { "" },
            list.join(", ")
        );
        (sql, tys)
    }

    /// A FROM list of one to three items joined in every way; the relations it brings.
    fn from(&mut self, depth: u32, outer: &[Rel]) -> (String, Vec<Rel>) {
        let n = 1 + self.below(if depth == 0 { 3 } else { 2 });
        let (mut sql, first, mut table) = self.item(depth);
        let mut rels = vec![first];
        // Note: `a, b JOIN c ON …` joins b and c first; the condition cannot see `a`.
        let mut segment = 0;
        for _ in 1..n {
            let kind = *self.pick(&[
                "JOIN",
                "LEFT JOIN",
                "RIGHT JOIN",
                "FULL JOIN",
                "CROSS JOIN",
                ",",
            ]);
            let lateral = matches!(kind, "JOIN" | "LEFT JOIN" | "CROSS JOIN" | ",")
                && depth < MAX_DEPTH
                && self.chance(10);
            let (item, rel, is_table) = if lateral {
                self.tag("lateral");
                let mut left = if kind == "," {
                    rels.clone()
                } else {
                    rels[segment..].to_vec()
                };
                left.extend(outer.iter().cloned());
                let (q, tys) = self.statement(depth + 1, None, &left);
                let alias = self.fresh("l");
                let rel = Rel {
                    alias: alias.clone(),
                    cols: numbered(&tys),
                    scalar: false,
                };
                (format!("LATERAL ({q}) {alias}"), rel, false)
            } else {
                self.item(depth)
            };
            self.tag(match kind {
                "JOIN" => "inner-join",
                "LEFT JOIN" => "left-join",
                "RIGHT JOIN" => "right-join",
                "FULL JOIN" => "full-join",
                "CROSS JOIN" => "cross-join",
                _ => "comma-join",
            });
            let cond = match kind {
                "CROSS JOIN" | "," => String::new(),
                _ if table && is_table && rels.len() == 1 && !lateral && self.chance(15) => {
                    self.tag("using");
                    " USING (id)".into()
                }
                "FULL JOIN" => format!(" ON {}", self.equijoin(&rels[segment..], &rel)),
                _ => {
                    if self.chance(60) {
                        format!(" ON {}", self.equijoin(&rels[segment..], &rel))
                    } else {
                        let mut both = rels[segment..].to_vec();
                        both.push(rel.clone());
                        both.extend(outer.iter().cloned());
                        format!(" ON {}", self.boolean(&both, depth, 1))
                    }
                }
            };
            sql = format!("{sql} {kind} {item}{cond}");
            if kind == "," {
                sql = sql.replacen(" , ", ", ", 1);
            }
            if kind == "," {
                segment = rels.len();
            }
            rels.push(rel);
            table = false;
        }
        (sql, rels)
    }

    /// `left.x = right.y` over integer columns (merge-joinable, as FULL JOIN needs), else `true`.
    fn equijoin(&mut self, left: &[Rel], right: &Rel) -> String {
        let ints = |rels: &[Rel]| -> Vec<String> {
            rels.iter()
                .flat_map(|r| {
                    r.cols
                        .iter()
                        .filter(|(_, t)| matches!(t, T::I4 | T::I8))
                        .map(|(c, _)| format!("{}.{c}", r.alias))
                })
                .collect()
        };
        let (l, r) = (ints(left), ints(std::slice::from_ref(right)));
        if l.is_empty() || r.is_empty() {
            return "true".into();
        }
        format!("{} = {}", self.pick(&l), self.pick(&r))
    }

    /// One FROM item: a table, derived table, CTE, VALUES list or set-returning function.
    fn item(&mut self, depth: u32) -> (String, Rel, bool) {
        let roll = self.below(100);
        if roll < 15 && depth < MAX_DEPTH {
            self.tag("derived-table");
            let (q, tys) = self.statement(depth + 1, None, &[]);
            let alias = self.fresh("d");
            let rel = Rel {
                alias: alias.clone(),
                cols: numbered(&tys),
                scalar: false,
            };
            return (format!("({q}) {alias}"), rel, false);
        }
        if roll < 30 && !self.ctes.is_empty() {
            self.tag("cte-ref");
            let cte = self.pick(&self.ctes.clone()).clone();
            let alias = self.fresh("r");
            let rel = Rel {
                alias: alias.clone(),
                cols: cte.cols.clone(),
                scalar: false,
            };
            return (format!("{} {alias}", cte.alias), rel, false);
        }
        if roll < 36 {
            self.tag("values");
            let alias = self.fresh("v");
            let rel = Rel {
                alias: alias.clone(),
                cols: numbered(&[T::I4, T::Text]),
                scalar: false,
            };
            return (
                format!("(VALUES (1, 'x'), (NULL, NULL), (2, 'ab')) {alias}(c0, c1)"),
                rel,
                false,
            );
        }
        if roll < 42 {
            self.tag("set-returning-function");
            let alias = self.fresh("g");
            let (f, t) = *self.pick(&[
                ("generate_series(1, 3)", T::I4),
                ("unnest('{1,NULL,3}'::int4[])", T::I4),
                ("jsonb_array_elements_text('[\"a\", null]')", T::Text),
            ]);
            let rel = Rel {
                alias: alias.clone(),
                cols: numbered(&[t]),
                scalar: true,
            };
            return (format!("{f} {alias}(c0)"), rel, false);
        }
        self.tag("table");
        let (name, cols) = *self.pick(TABLES);
        let alias = self.fresh("t");
        let rel = Rel {
            alias: alias.clone(),
            cols: cols.iter().map(|(c, t)| (c.to_string(), *t)).collect(),
            scalar: false,
        };
        if self.chance(6) {
            // Note: 100 percent keeps every row, so the rows (and NULLs) stay the same.
            self.tag("tablesample");
            let method = *self.pick(&["SYSTEM", "BERNOULLI"]);
            let seed = if self.chance(50) {
                " REPEATABLE (7)"
            } else {
                ""
            };
            return (
                format!("{name} {alias} TABLESAMPLE {method} (100){seed}"),
                rel,
                true,
            );
        }
        (format!("{name} {alias}"), rel, true)
    }

    fn columns_of(sc: &[Rel], t: T) -> Vec<String> {
        sc.iter()
            .flat_map(|r| {
                r.cols
                    .iter()
                    .filter(move |(_, ct)| *ct == t)
                    .map(move |(c, _)| format!("{}.{c}", r.alias))
            })
            .collect()
    }

    fn literal(&mut self, t: T) -> String {
        let options: &[&str] = match t {
            T::I4 => &["0", "1", "2", "-1", "30"],
            T::I8 => &["7::int8", "100::int8"],
            T::Num => &["2.5", "0.0"],
            T::F8 => &["1.5::float8", "0::float8"],
            T::Text => &["'a'", "''", "'ab'", "'a'::text", "''::text"],
            T::Bool => &["true", "false"],
            T::Date => &["'2024-01-02'::date"],
            T::Jsonb => &["'{\"k\": 2}'::jsonb", "'null'::jsonb", "'[1, null]'::jsonb"],
            T::Json => &["'[1]'::json"],
            T::I4Arr => &["'{1,NULL}'::int4[]", "ARRAY[1, 2]"],
        };
        self.pick(options).to_string()
    }

    /// An expression of type `t` over the relations `sc`.
    fn expr(&mut self, sc: &[Rel], t: T, depth: u32, level: u32) -> String {
        let cols = Self::columns_of(sc, t);
        // Note: JSON of a whole row is how applications return nested objects; it is common
        // enough to be drawn often, at any level.
        if t == T::Jsonb && !sc.is_empty() && self.chance(25) {
            self.tag("whole-row");
            let r = self.pick(sc).alias.clone();
            return format!("to_jsonb({r})");
        }
        if t == T::Json && sc.iter().any(|r| !r.scalar) && self.chance(25) {
            self.tag("whole-row");
            let records: Vec<&Rel> = sc.iter().filter(|r| !r.scalar).collect();
            return format!("row_to_json({})", self.pick(&records).alias);
        }
        if level >= MAX_EXPR || self.chance(35) {
            if !cols.is_empty() && self.chance(75) {
                return self.pick(&cols).clone();
            }
            if self.chance(15) {
                self.tag("null-literal");
                return format!("NULL::{}", t.sql());
            }
            return self.literal(t);
        }
        let l = level + 1;
        match self.below(10) {
            0 => {
                self.tag("coalesce");
                let (a, b) = (self.expr(sc, t, depth, l), self.expr(sc, t, depth, l));
                return format!("COALESCE({a}, {b})");
            }
            1 => {
                self.tag("case");
                let c = self.boolean(sc, depth, l);
                let a = self.expr(sc, t, depth, l);
                if self.chance(30) {
                    return format!("CASE WHEN {c} THEN {a} END");
                }
                let b = self.expr(sc, t, depth, l);
                return format!("CASE WHEN {c} THEN {a} ELSE {b} END");
            }
            2 if t.equality() => {
                self.tag("nullif");
                let (a, b) = (self.expr(sc, t, depth, l), self.expr(sc, t, depth, l));
                return format!("NULLIF({a}, {b})");
            }
            3 if depth < MAX_DEPTH => return self.scalar_subquery(sc, t, depth),
            4 => {
                let with_cols: Vec<&Rel> = sc
                    .iter()
                    .filter(|r| !r.scalar && r.cols.iter().any(|(_, ct)| *ct == t))
                    .collect();
                if !with_cols.is_empty() {
                    self.tag("whole-row");
                    let r = (*self.pick(&with_cols)).clone();
                    let fields: Vec<&String> = r
                        .cols
                        .iter()
                        .filter(|(_, ct)| *ct == t)
                        .map(|(c, _)| c)
                        .collect();
                    let f = self.pick(&fields);
                    return format!("({}).{f}", r.alias);
                }
            }
            5 if t.ordered() || t == T::Bool => {
                self.tag("greatest");
                let f = self.pick(&["GREATEST", "LEAST"]).to_string();
                let (a, b) = (self.expr(sc, t, depth, l), self.expr(sc, t, depth, l));
                return format!("{f}({a}, {b})");
            }
            _ => {}
        }
        self.typed(sc, t, depth, l)
    }

    /// Forms specific to `t`: operators, functions (some returning NULL on non-NULL input),
    /// casts, whole-row functions.
    fn typed(&mut self, sc: &[Rel], t: T, depth: u32, l: u32) -> String {
        let rels: Vec<String> = sc.iter().map(|r| r.alias.clone()).collect();
        match t {
            T::I4 => match self.below(6) {
                0 => {
                    let (a, b) = (
                        self.expr(sc, T::I4, depth, l),
                        self.expr(sc, T::I4, depth, l),
                    );
                    format!("({a} + {b})")
                }
                1 => format!("length({})", self.expr(sc, T::Text, depth, l)),
                2 => {
                    self.tag("null-on-input");
                    format!("array_length({}, 1)", self.expr(sc, T::I4Arr, depth, l))
                }
                3 => {
                    self.tag("null-on-input");
                    let (a, b) = (
                        self.expr(sc, T::I4Arr, depth, l),
                        self.expr(sc, T::I4, depth, l),
                    );
                    format!("array_position({a}, {b})")
                }
                4 => {
                    self.tag("subscript");
                    format!("({})[2]", self.expr(sc, T::I4Arr, depth, l))
                }
                _ => format!("strpos({}, 'a')", self.expr(sc, T::Text, depth, l)),
            },
            T::I8 => match self.below(3) {
                0 => {
                    self.tag("cast");
                    format!("{}::int8", self.expr(sc, T::I4, depth, l))
                }
                1 => {
                    let (a, b) = (
                        self.expr(sc, T::I8, depth, l),
                        self.expr(sc, T::I4, depth, l),
                    );
                    format!("({a} + {b})")
                }
                _ => {
                    if depth < MAX_DEPTH {
                        self.tag("scalar-subquery");
                        let (name, _) = *self.pick(TABLES);
                        let alias = self.fresh("q");
                        format!("(SELECT count(*) FROM {name} {alias})")
                    } else {
                        self.literal(T::I8)
                    }
                }
            },
            T::Num => match self.below(3) {
                0 => format!("({} * 1.5)", self.expr(sc, T::Num, depth, l)),
                1 => format!("round({}, 1)", self.expr(sc, T::Num, depth, l)),
                _ => {
                    self.tag("cast");
                    let from = *self.pick(&[T::I4, T::I8]);
                    format!("{}::numeric", self.expr(sc, from, depth, l))
                }
            },
            T::F8 => match self.below(3) {
                0 => format!("({} + 1)", self.expr(sc, T::F8, depth, l)),
                1 => format!("sqrt(abs({}))", self.expr(sc, T::F8, depth, l)),
                _ => {
                    self.tag("cast");
                    format!("{}::float8", self.expr(sc, T::Num, depth, l))
                }
            },
            T::Text => match self.below(8) {
                0 => {
                    let (a, b) = (
                        self.expr(sc, T::Text, depth, l),
                        self.expr(sc, T::Text, depth, l),
                    );
                    format!("({a} || {b})")
                }
                1 => {
                    let (a, b) = (
                        self.expr(sc, T::Text, depth, l),
                        self.expr(sc, T::Text, depth, l),
                    );
                    format!("concat({a}, {b})")
                }
                2 => format!("upper({})", self.expr(sc, T::Text, depth, l)),
                3 => {
                    self.tag("null-on-input");
                    format!(
                        "substring({} from 'a(.)')",
                        self.expr(sc, T::Text, depth, l)
                    )
                }
                4 => {
                    self.tag("cast");
                    let from = *self.pick(&ALL);
                    format!("({})::text", self.expr(sc, from, depth, l))
                }
                5 => {
                    self.tag("null-on-input");
                    format!("({} ->> 'k')", self.expr(sc, T::Jsonb, depth, l))
                }
                6 => format!("split_part({}, 'a', 2)", self.expr(sc, T::Text, depth, l)),
                _ => {
                    let (a, b) = (
                        self.expr(sc, T::Text, depth, l),
                        self.expr(sc, T::I4, depth, l),
                    );
                    format!("format('%s-%s', {a}, {b})")
                }
            },
            T::Bool => self.boolean(sc, depth, l),
            T::Date => format!("({} + 1)", self.expr(sc, T::Date, depth, l)),
            T::Jsonb => match self.below(6) {
                0 | 1 if !rels.is_empty() => {
                    self.tag("whole-row");
                    let r = self.pick(&rels).clone();
                    if self.chance(50) {
                        format!("to_jsonb({r})")
                    } else {
                        format!("to_jsonb({r}.*)")
                    }
                }
                2 => {
                    self.tag("null-on-input");
                    let k = self.pick(&["'k'", "0"]).to_string();
                    format!("({} -> {k})", self.expr(sc, T::Jsonb, depth, l))
                }
                3 => {
                    let from = *self.pick(&ALL);
                    format!("to_jsonb({})", self.expr(sc, from, depth, l))
                }
                4 => {
                    let from = *self.pick(&ALL);
                    format!("jsonb_build_object('k', {})", self.expr(sc, from, depth, l))
                }
                _ => format!("jsonb_strip_nulls({})", self.expr(sc, T::Jsonb, depth, l)),
            },
            T::Json => match self.below(3) {
                0 if sc.iter().any(|r| !r.scalar) => {
                    self.tag("whole-row");
                    let records: Vec<&Rel> = sc.iter().filter(|r| !r.scalar).collect();
                    format!("row_to_json({})", self.pick(&records).alias)
                }
                1 => {
                    let from = *self.pick(&ALL);
                    format!("to_json({})", self.expr(sc, from, depth, l))
                }
                _ => {
                    let (a, b) = (
                        self.expr(sc, T::I4, depth, l),
                        self.expr(sc, T::Text, depth, l),
                    );
                    format!("json_build_array({a}, {b})")
                }
            },
            T::I4Arr => match self.below(3) {
                0 => {
                    let (a, b) = (
                        self.expr(sc, T::I4, depth, l),
                        self.expr(sc, T::I4, depth, l),
                    );
                    format!("ARRAY[{a}, {b}]")
                }
                1 => {
                    let (a, b) = (
                        self.expr(sc, T::I4Arr, depth, l),
                        self.expr(sc, T::I4, depth, l),
                    );
                    format!("array_append({a}, {b})")
                }
                _ => format!("array_remove({}, 1)", self.expr(sc, T::I4Arr, depth, l)),
            },
        }
    }

    /// A boolean condition.
    fn boolean(&mut self, sc: &[Rel], depth: u32, level: u32) -> String {
        let l = level + 1;
        if level >= MAX_EXPR {
            let cols = Self::columns_of(sc, T::Bool);
            if !cols.is_empty() && self.chance(50) {
                return self.pick(&cols).clone();
            }
            let t = *self.pick(&ALL);
            return format!("({}) IS NOT NULL", self.expr(sc, t, depth, l));
        }
        match self.below(13) {
            0 => {
                let t = *self.pick(&[T::I4, T::I8, T::Text, T::Num, T::Date, T::Bool]);
                let (a, b) = (self.expr(sc, t, depth, l), self.expr(sc, t, depth, l));
                format!("({a}) = ({b})")
            }
            1 => {
                let t = *self.pick(&[T::I4, T::Text, T::F8, T::Date]);
                let (a, b) = (self.expr(sc, t, depth, l), self.expr(sc, t, depth, l));
                format!("({a}) < ({b})")
            }
            2 => {
                let t = *self.pick(&ALL);
                let not = if self.chance(50) { " NOT" } else { "" };
                format!("({}) IS{not} NULL", self.expr(sc, t, depth, l))
            }
            3 => {
                let (a, b) = (self.boolean(sc, depth, l), self.boolean(sc, depth, l));
                format!("({a} AND {b})")
            }
            4 => {
                self.tag("or");
                let (a, b) = (self.boolean(sc, depth, l), self.boolean(sc, depth, l));
                format!("({a} OR {b})")
            }
            5 => format!("NOT ({})", self.boolean(sc, depth, l)),
            6 => format!("({}) IN (1, 2)", self.expr(sc, T::I4, depth, l)),
            7 => {
                self.tag("between");
                format!("({}) BETWEEN 0 AND 20", self.expr(sc, T::I4, depth, l))
            }
            8 if depth < MAX_DEPTH => {
                self.tag("exists");
                let (name, cols) = *self.pick(TABLES);
                let alias = self.fresh("e");
                let mut inner = vec![Rel {
                    alias: alias.clone(),
                    cols: cols.iter().map(|(c, t)| (c.to_string(), *t)).collect(),
                    scalar: false,
                }];
                inner.extend(sc.iter().cloned());
                let w = self.boolean(&inner, depth + 1, l);
                format!("EXISTS (SELECT 1 FROM {name} {alias} WHERE {w})")
            }
            9 if !sc.is_empty() => {
                self.tag("whole-row");
                let r = self.pick(sc).alias.clone();
                let not = if self.chance(50) { " NOT" } else { "" };
                format!("{r} IS{not} NULL")
            }
            10 => format!("({}) LIKE 'a%'", self.expr(sc, T::Text, depth, l)),
            11 if depth < MAX_DEPTH && self.chance(50) => {
                self.tag("in-subquery");
                let (name, cols) = *self.pick(TABLES);
                let alias = self.fresh("i");
                let ints: Vec<&str> = cols
                    .iter()
                    .filter(|(_, t)| *t == T::I4)
                    .map(|(c, _)| *c)
                    .collect();
                let col = self.pick(&ints).to_string();
                let not = if self.chance(40) { " NOT" } else { "" };
                let x = self.expr(sc, T::I4, depth, l);
                format!("({x}){not} IN (SELECT {alias}.{col} FROM {name} {alias})")
            }
            _ => {
                let cols = Self::columns_of(sc, T::Bool);
                if !cols.is_empty() {
                    return self.pick(&cols).clone();
                }
                let (a, b) = (
                    self.expr(sc, T::I4, depth, l),
                    self.expr(sc, T::I4, depth, l),
                );
                format!("(({a}) IS DISTINCT FROM ({b}))")
            }
        }
    }

    /// `(SELECT … FROM table … LIMIT 1)`, correlated with `sc`, or an aggregate over it.
    fn scalar_subquery(&mut self, sc: &[Rel], t: T, depth: u32) -> String {
        self.tag("scalar-subquery");
        let (name, cols) = *self.pick(TABLES);
        let alias = self.fresh("s");
        let mut inner = vec![Rel {
            alias: alias.clone(),
            cols: cols.iter().map(|(c, t)| (c.to_string(), *t)).collect(),
            scalar: false,
        }];
        inner.extend(sc.iter().cloned());
        let w = self.boolean(&inner, depth + 1, 1);
        if self.chance(40) {
            let a = self.aggregate(&inner[..1], t, depth + 1);
            return format!("(SELECT {a} FROM {name} {alias} WHERE {w})");
        }
        let e = self.expr(&inner, t, depth + 1, 1);
        format!("(SELECT {e} FROM {name} {alias} WHERE {w} LIMIT 1)")
    }

    /// An aggregate call of result type `t` over `sc`, which must be the query's own FROM
    /// relations (an aggregate of outer columns only is the outer query's aggregate).
    fn aggregate(&mut self, sc: &[Rel], t: T, depth: u32) -> String {
        self.tag("aggregate");
        let call = match t {
            T::I8 => match self.below(3) {
                0 => "count(*)".to_string(),
                1 => {
                    let from = *self.pick(&ALL);
                    format!("count({})", self.expr(sc, from, depth, 1))
                }
                _ => format!("sum({})", self.expr(sc, T::I4, depth, 1)),
            },
            T::Num => {
                let from = *self.pick(&[T::I4, T::I8, T::Num]);
                let f = *self.pick(&["sum", "avg"]);
                let f = if from == T::I4 && f == "sum" {
                    "avg"
                } else {
                    f
                };
                format!("{f}({})", self.expr(sc, from, depth, 1))
            }
            T::F8 => {
                let f = *self.pick(&["sum", "avg", "max"]);
                format!("{f}({})", self.expr(sc, T::F8, depth, 1))
            }
            T::Text if self.chance(40) => {
                format!("string_agg({}, ',')", self.expr(sc, T::Text, depth, 1))
            }
            T::Bool => {
                let f = *self.pick(&["bool_and", "bool_or", "every"]);
                format!("{f}({})", self.boolean(sc, depth, 1))
            }
            T::Jsonb => {
                if !sc.is_empty() && self.chance(40) {
                    self.tag("whole-row");
                    format!("jsonb_agg({})", self.pick(sc).alias)
                } else {
                    let from = *self.pick(&ALL);
                    format!("jsonb_agg({})", self.expr(sc, from, depth, 1))
                }
            }
            T::Json => {
                let from = *self.pick(&ALL);
                format!("json_agg({})", self.expr(sc, from, depth, 1))
            }
            T::I4Arr => format!("array_agg({})", self.expr(sc, T::I4, depth, 1)),
            _ => {
                let f = *self.pick(&["min", "max"]);
                format!("{f}({})", self.expr(sc, t, depth, 1))
            }
        };
        if self.chance(15) {
            self.tag("filter");
            let w = self.boolean(sc, depth, 2);
            return format!("{call} FILTER (WHERE {w})");
        }
        call
    }

    /// A window function call of result type `t`.
    /// Aggregates used as window functions take their arguments from `inner` (the query's
    /// own FROM): one over outer columns only would belong to the outer query.
    fn window(&mut self, sc: &[Rel], inner: &[Rel], t: T, depth: u32) -> String {
        self.tag("window");
        let mut over = Vec::new();
        if self.chance(50) {
            let p = *self.pick(&[T::I4, T::Text]);
            over.push(format!("PARTITION BY {}", self.expr(sc, p, depth, 2)));
        }
        let ordered = self.chance(60);
        if ordered {
            let o = *self.pick(&[T::I4, T::Text, T::Date]);
            over.push(format!("ORDER BY {}", self.expr(sc, o, depth, 2)));
        }
        let over = format!("OVER ({})", over.join(" "));
        let call = match (t, self.below(4)) {
            (T::I8, 0) => "row_number()".to_string(),
            (T::I8, 1) => "rank()".to_string(),
            (T::I8, 2) => "count(*)".to_string(),
            (T::I8, _) => format!("sum({})", self.expr(inner, T::I4, depth, 1)),
            (T::I4, 0) => "ntile(2)".to_string(),
            (_, 0) => format!("lag({})", self.expr(sc, t, depth, 1)),
            (_, 1) => format!("lead({}, 1)", self.expr(sc, t, depth, 1)),
            (_, 2) => format!("first_value({})", self.expr(sc, t, depth, 1)),
            (_, _) => {
                self.tag("window-aggregate");
                let a = self.aggregate(inner, t, depth);
                // Note: the aggregate's own FILTER stays; OVER follows it.
                return format!("{a} {over}");
            }
        };
        format!("{call} {over}")
    }
}

/// Columns `c0, c1, …` of the given types (every generated select list is aliased so).
fn numbered(tys: &[T]) -> Vec<(String, T)> {
    tys.iter()
        .enumerate()
        .map(|(i, t)| (format!("c{i}"), *t))
        .collect()
}

/// The type a set operation gives two columns (the generator only mixes integer kinds).
fn common(a: T, b: T) -> T {
    let rank = |t: T| match t {
        T::I4 => 0,
        T::I8 => 1,
        _ => 2,
    };
    if a == b || !a.integer_family() || !b.integer_family() {
        return a;
    }
    if rank(a) >= rank(b) { a } else { b }
}
