"""Database connection strings in the syntaxes URLs do not cover, written after the detectors
and scored blind once (a twenty-eighth set beside `later_forms.py`'s nine and the later ones).

Oracle's `user/password@host` (SQL*Plus, Data Pump, RMAN, a JDBC thin URL), Go's MySQL DSN
(`user:pass@tcp(host:3306)/db`, no scheme), libpq's keyword DSN (`host=… password=…`), SQL
Server's JDBC properties (`;password=X`), Snowflake's and ClickHouse's URLs, Neo4j's `bolt://`,
CockroachDB's `--url`, `clickhouse-client --password`, `influx -password`, `cqlsh -p`, MySQL
Shell's `user:pw@host`, Sybase's `isql -P`, DB2's `connect to … user … using X`, and Informix's
`DATABASE …` with `PASSWORD`. Values come from `later_forms.py`'s generator (its `R`, reseeded
each round by its `score`).

Scored blind, before any rule was written for them (3 rounds): 48 of 57 values (0.842). Missed:
RMAN's `target sys/X@prod` and `catalog rman/X@rcat`, DB2's `connect to … user … using X`,
Informix's `CONNECT TO … USER … USING 'X'`. Rules since (credentials.py's Oracle logins,
sql_secrets.py): 57 of 57, 190 of 190 over 10 rounds.

    python -m benchmarks.privacy.later_dsn [--seeds 3] [--show-missed]
"""

from __future__ import annotations

from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, an, pw_without, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []


form = registrar("dsn", FORMS)


def p_() -> str:
    """A password with none of the characters this set's syntaxes split on."""
    return pw_without("@/:;'\"\\ #%*!")


@form
def sqlplus() -> Form:
    p = p_()
    return f"$ sqlplus scott/{p}@//db.internal:1521/ORCLPDB1 @migrate.sql", [p]


@form
def expdp() -> Form:
    p = p_()
    return f"expdp system/{p}@ORCL schemas=HR directory=DATA_PUMP_DIR dumpfile=hr.dmp", [p]


@form
def rman() -> Form:
    p = p_()
    return f"rman target sys/{p}@prod catalog rman/{p}@rcat", [p]


@form
def jdbc_oracle_thin() -> Form:
    p = p_()
    return f"spring.datasource.url=jdbc:oracle:thin:app/{p}@db.internal:1521:ORCL", [p]


@form
def go_mysql_dsn() -> Form:
    p = p_()
    return f'db, err := sql.Open("mysql", "app:{p}@tcp(db.internal:3306)/shop?parseTime=true")', [p]


@form
def libpq_keywords() -> Form:
    p = p_()
    return f'psql "host=db.internal port=5432 dbname=app user=app password={p} sslmode=require"', [p]


@form
def libpq_keywords_go() -> Form:
    p = p_()
    return f'connStr := "host=localhost user=app password={p} dbname=app sslmode=disable"', [p]


@form
def sqlserver_jdbc() -> Form:
    p = p_()
    return f"jdbc:sqlserver://db.internal:1433;databaseName=app;user=app;password={p};encrypt=true", [p]


@form
def snowflake_url() -> Form:
    p = p_()
    return f"SNOWFLAKE_URL=snowflake://loader:{p}@xy12345.eu-west-1/analytics/public?warehouse=LOAD_WH", [p]


@form
def clickhouse_url() -> Form:
    p = p_()
    return f"clickhouse://default:{p}@ch.internal:9000/events", [p]


@form
def neo4j_bolt() -> Form:
    p = p_()
    return f"NEO4J_URI=bolt://neo4j:{p}@graph.internal:7687", [p]


@form
def cockroach_url() -> Form:
    p = p_()
    return f"cockroach sql --url 'postgresql://root:{p}@crdb.internal:26257/defaultdb?sslmode=verify-full'", [p]


@form
def clickhouse_client() -> Form:
    p = p_()
    return f"clickhouse-client --host ch.internal --user default --password {p} --query 'SELECT 1'", [p]


@form
def influx_cli() -> Form:
    p = p_()
    return f"influx -host tsdb.internal -username admin -password {p} -database metrics", [p]


@form
def cqlsh() -> Form:
    p = p_()
    return f"cqlsh cass.internal 9042 -u cassandra -p {p}", [p]


@form
def mysqlsh_uri() -> Form:
    p = p_()
    return f"mysqlsh --uri admin:{p}@db.internal:3306 --sql", [p]


@form
def sybase_isql() -> Form:
    p = p_()
    return f"isql -S PROD_ASE -U sa -P {p} -i nightly.sql", [p]


@form
def db2_connect() -> Form:
    p = p_()
    return f"db2 connect to SAMPLE user db2inst1 using {p}", [p]


@form
def informix_dbaccess() -> Form:
    a = an(14)
    return f"CONNECT TO 'stores@ol_informix' USER 'informix' USING '{a}';", [a]


def main(argv: list[str] | None = None) -> None:
    set_main("dsn", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()
