"""Passwords in databases' own statements and shells, written after the detectors and scored
blind once (a twenty-first set beside `later_forms.py`'s nine and the later ones).

What migrations, seed scripts and database shells hold: MySQL's `CREATE USER … IDENTIFIED BY`,
`ALTER USER`, `SET PASSWORD`, a grant with a password; PostgreSQL's `CREATE ROLE … PASSWORD`,
`ALTER ROLE`, `\\password`'s echo; SQL Server's `CREATE LOGIN … WITH PASSWORD =`, `sp_addlogin`;
Oracle's `IDENTIFIED BY`; Snowflake's `CREATE USER … PASSWORD =`; ClickHouse's `IDENTIFIED WITH
sha256_password BY`; Cassandra's and ScyllaDB's `CREATE ROLE … WITH PASSWORD =`; Neo4j's `ALTER
CURRENT USER SET PASSWORD FROM … TO`; MongoDB's `db.createUser` and `changeUserPassword`; Redis'
`CONFIG SET requirepass` and `ACL SETUSER … >password`; InfluxDB's CLI; CouchDB's `[admins]`;
a Django `createsuperuser` environment; a Rails seed. Values come from `later_forms.py`'s
generator (its `R`, reseeded each round by its `score`).

Scored blind, before any rule was written for them (3 rounds): 42 of 66 values (0.636). Missed:
MySQL's `SET PASSWORD FOR … = 'X'`, SQL Server's `sp_addlogin 'login', 'X'`, Oracle's
`IDENTIFIED BY "X"`, Neo4j's `SET PASSWORD FROM 'old' TO 'new'` (both), MongoDB's
`changeUserPassword`, Redis' `ACL SETUSER … >X`, CouchDB's `[admins]` users. Rules since
(router/privacy/sql_secrets.py): 66 of 66.

    python -m benchmarks.privacy.later_sql [--seeds 3] [--show-missed]
"""

from __future__ import annotations

from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, pw, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []


form = registrar("sql", FORMS)


def quoted() -> str:
    return pw().replace("'", "x")


@form
def mysql_create_user() -> Form:
    p = quoted()
    return f"CREATE USER 'app'@'%' IDENTIFIED BY '{p}';\nGRANT SELECT, INSERT ON shop.* TO 'app'@'%';", [p]


@form
def mysql_alter_user() -> Form:
    p = quoted()
    return f"ALTER USER 'root'@'localhost' IDENTIFIED WITH mysql_native_password BY '{p}';", [p]


@form
def mysql_set_password() -> Form:
    p = quoted()
    return f"SET PASSWORD FOR 'report'@'10.0.%' = '{p}';", [p]


@form
def postgres_create_role() -> Form:
    p = quoted()
    return f"CREATE ROLE analytics WITH LOGIN PASSWORD '{p}' VALID UNTIL '2027-01-01';", [p]


@form
def postgres_alter_role() -> Form:
    p = quoted()
    return f"ALTER ROLE app_rw PASSWORD '{p}';", [p]


@form
def postgres_create_user_lower() -> Form:
    p = quoted()
    return f"create user etl with encrypted password '{p}';", [p]


@form
def sqlserver_login() -> Form:
    p = quoted()
    return f"CREATE LOGIN app_login WITH PASSWORD = '{p}', CHECK_POLICY = OFF;\nGO", [p]


@form
def sqlserver_sp_addlogin() -> Form:
    p = quoted()
    return f"EXEC sp_addlogin 'legacy_app', '{p}', 'Sales';", [p]


@form
def oracle_identified_by() -> Form:
    p = pw().replace("'", "x").replace('"', "x")
    return f'CREATE USER reporting IDENTIFIED BY "{p}" DEFAULT TABLESPACE users;', [p]


@form
def snowflake_user() -> Form:
    p = quoted()
    return f"CREATE USER loader PASSWORD = '{p}' DEFAULT_ROLE = LOADER MUST_CHANGE_PASSWORD = FALSE;", [p]


@form
def clickhouse_user() -> Form:
    p = quoted()
    return f"CREATE USER grafana IDENTIFIED WITH sha256_password BY '{p}' HOST ANY;", [p]


@form
def cassandra_role() -> Form:
    p = quoted()
    return f"CREATE ROLE app WITH PASSWORD = '{p}' AND LOGIN = true;", [p]


@form
def neo4j_password() -> Form:
    old, new = quoted(), quoted()
    return f"ALTER CURRENT USER SET PASSWORD FROM '{old}' TO '{new}';", [old, new]


@form
def mongo_create_user() -> Form:
    p = quoted()
    return (
        f'db.createUser({{ user: "reporting", pwd: "{p}", roles: [{{ role: "read", db: "shop" }}] }})',
        [p],
    )


@form
def mongo_change_password() -> Form:
    p = quoted()
    return f'db.changeUserPassword("reporting", "{p}")', [p]


@form
def redis_requirepass() -> Form:
    p = quoted()
    return f'127.0.0.1:6379> CONFIG SET requirepass "{p}"\nOK', [p]


@form
def redis_acl() -> Form:
    p = pw().replace(" ", "x")
    return f"127.0.0.1:6379> ACL SETUSER worker on >{p} ~jobs:* +@list\nOK", [p]


@form
def influx_cli() -> Form:
    p = quoted()
    return f"influx user password --name admin --password '{p}'", [p]


@form
def couchdb_admins() -> Form:
    p = pw()
    return f"[admins]\nadmin = {p}\n", [p]


@form
def django_superuser_env() -> Form:
    p = quoted()
    return (
        f"DJANGO_SUPERUSER_USERNAME=admin DJANGO_SUPERUSER_PASSWORD='{p}' "
        "python manage.py createsuperuser --noinput --email admin@example.com",
        [p],
    )


@form
def rails_seed() -> Form:
    p = pw().replace('"', "x")
    return f'User.create!(email: "admin@example.com", password: "{p}", password_confirmation: "{p}")', [p]


def main(argv: list[str] | None = None) -> None:
    set_main("sql", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()
