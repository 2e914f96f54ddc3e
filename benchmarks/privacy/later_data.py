"""Credentials in data engineering's tools, written after the detectors and scored blind once
(a seventeenth set beside `later_forms.py`'s nine and the later ones).

dbt's `profiles.yml`, Airflow's connections (an `AIRFLOW_CONN_` URI, `airflow connections get`'s
table, its JSON extra), Spark's S3A keys on the command line and in `spark-defaults.conf`,
Hadoop's `core-site.xml` and Hive's metastore password as XML properties, a Kafka client's JAAS
line, a Debezium connector's JSON, a Snowflake connector call, an ODBC connection string's
`PWD=`, a Redshift JDBC URL with its password as a parameter, Flyway's and Liquibase's
properties, Elasticsearch's bootstrap password, Grafana's admin password in its INI, Superset's
secret key, Great Expectations' datasource, Prefect's and Dagster's secrets, Trino's password
file, ClickHouse's client flags, `psql`'s service file, a BigQuery key's JSON field, a Sqoop
import. Values come from `later_forms.py`'s generator (its `R`, reseeded each round by its
`score`).

Scored blind, before any rule was written for them (3 rounds): 66 of 78 values (0.846). Missed:
Airflow's `connections get -o table` (its rule line is `===+===`, which no table reader took for
a rule line), the password Elasticsearch's reset tool prints (`New value: X`), Prefect's
`Secret(value="X")`, a service account key's `private_key_id`. Rules since
(router/privacy/data_secrets.py, the rule line in tables.py): 78 of 78.

    python -m benchmarks.privacy.later_data [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import json
from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, an, hexs, host, pw, registrar, set_main, user

FORMS: list[tuple[str, Callable[[], Form]]] = []


form = registrar("data", FORMS)


@form
def dbt_profiles() -> Form:
    p = pw()
    return (
        "analytics:\n  target: prod\n  outputs:\n    prod:\n      type: postgres\n"
        f"      host: {host()}\n      user: {user()}\n      password: {p}\n      port: 5432\n"
        "      dbname: analytics\n      schema: marts\n      threads: 8\n",
        [p],
    )


@form
def airflow_conn_env() -> Form:
    p = pw().replace("%", "x").replace("#", "x")
    return f"export AIRFLOW_CONN_WAREHOUSE='postgresql://{user()}:{p}@{host()}:5432/dw'", [p]


@form
def airflow_connections_get() -> Form:
    p = pw()
    return (
        "$ airflow connections get warehouse -o table\n"
        "id | conn_id   | conn_type | host        | schema | login  | password      | port\n"
        "===+===========+===========+=============+========+========+===============+=====\n"
        f"1  | warehouse | postgres  | {host()} | dw     | loader | {p} | 5432\n",
        [p],
    )


@form
def airflow_extra_json() -> Form:
    secret = an(40)
    extra = json.dumps(
        {"region_name": "eu-west-1", "aws_access_key_id": "AKIA" + an(16).upper(), "aws_secret_access_key": secret}
    )
    return f"airflow connections add aws_default --conn-type aws --conn-extra '{extra}'", [secret]


@form
def spark_submit_s3a() -> Form:
    secret = an(40)
    return (
        "spark-submit --master yarn \\\n"
        "  --conf spark.hadoop.fs.s3a.access.key=AKIA" + an(16).upper() + " \\\n"
        f"  --conf spark.hadoop.fs.s3a.secret.key={secret} \\\n"
        "  jobs/etl.py --date 2026-03-01",
        [secret],
    )


@form
def spark_defaults() -> Form:
    secret = an(40)
    return (
        "spark.eventLog.enabled           true\n"
        "spark.hadoop.fs.s3a.access.key   AKIA" + an(16).upper() + "\n"
        f"spark.hadoop.fs.s3a.secret.key   {secret}\n",
        [secret],
    )


@form
def core_site_xml() -> Form:
    secret = an(40)
    return (
        "<configuration>\n  <property>\n    <name>fs.s3a.access.key</name>\n"
        f"    <value>AKIA{an(16).upper()}</value>\n  </property>\n  <property>\n"
        f"    <name>fs.s3a.secret.key</name>\n    <value>{secret}</value>\n  </property>\n</configuration>\n",
        [secret],
    )


@form
def hive_site_xml() -> Form:
    p = pw()
    return (
        "<property>\n  <name>javax.jdo.option.ConnectionUserName</name>\n  <value>hive</value>\n</property>\n"
        "<property>\n  <name>javax.jdo.option.ConnectionPassword</name>\n"
        f"  <value>{p}</value>\n</property>\n",
        [p],
    )


@form
def kafka_jaas() -> Form:
    p = pw()
    return (
        "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="{user()}" password="{p}";\n',
        [p],
    )


@form
def debezium_connector() -> Form:
    p = pw()
    config = {
        "name": "inventory-connector",
        "config": {
            "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "database.hostname": host(),
            "database.user": "debezium",
            "database.password": p,
            "database.dbname": "inventory",
        },
    }
    return json.dumps(config, indent=2), [p]


@form
def snowflake_connect() -> Form:
    p = pw()
    return (
        "import snowflake.connector\n\n"
        "conn = snowflake.connector.connect(\n"
        f"    user='{user()}',\n    password='{p}',\n    account='xy12345.eu-west-1',\n    warehouse='ETL_WH',\n)\n",
        [p],
    )


@form
def odbc_string() -> Form:
    p = pw().replace(";", "x")
    return (
        "DRIVER={ODBC Driver 18 for SQL Server};SERVER=sql01.corp.local;DATABASE=Sales;"
        f"UID={user()};PWD={p};Encrypt=yes",
        [p],
    )


@form
def redshift_jdbc() -> Form:
    p = pw().replace("&", "x").replace("#", "x").replace("%", "x")
    return f"jdbc:redshift://analytics.abc123.eu-west-1.redshift.amazonaws.com:5439/dev?user=etl&password={p}", [p]


@form
def flyway_conf() -> Form:
    p = pw()
    return f"flyway.url=jdbc:postgresql://{host()}:5432/app\nflyway.user={user()}\nflyway.password={p}\n", [p]


@form
def liquibase_properties() -> Form:
    p = pw()
    return (
        "changeLogFile: db/changelog/db.changelog-master.yaml\n"
        f"url: jdbc:mysql://{host()}:3306/app\nusername: {user()}\npassword: {p}\n",
        [p],
    )


@form
def elastic_bootstrap() -> Form:
    p = pw()
    return (
        "$ bin/elasticsearch-reset-password -u elastic\n"
        "This tool will reset the password of the [elastic] user to an autogenerated value.\n"
        "The password will be printed in the console.\nPlease confirm that you would like to continue [y/N]y\n\n\n"
        f"Password for the [elastic] user successfully reset.\nNew value: {p}\n",
        [p],
    )


@form
def grafana_ini() -> Form:
    p = pw()
    return f"[security]\n# default admin user, created on startup\nadmin_user = admin\nadmin_password = {p}\n", [p]


@form
def superset_config() -> Form:
    key = an(42)
    return f"# superset_config.py\nROW_LIMIT = 5000\nSECRET_KEY = '{key}'\n", [key]


@form
def great_expectations() -> Form:
    p = pw().replace("@", "x").replace(":", "x").replace("/", "x")
    return (
        "datasources:\n  warehouse:\n    class_name: Datasource\n    execution_engine:\n"
        "      class_name: SqlAlchemyExecutionEngine\n"
        f"      connection_string: snowflake://{user()}:{p}@xy12345/ANALYTICS/PUBLIC\n",
        [p],
    )


@form
def prefect_secret() -> Form:
    token = an(32)
    return (
        "from prefect.blocks.system import Secret\n\n"
        f'Secret(value="{token}").save(name="github-token", overwrite=True)\n',
        [token],
    )


@form
def dagster_env() -> Form:
    p = pw()
    return (
        "resources:\n  warehouse:\n    config:\n      user: loader\n"
        f"      password: {p}\n      host:\n        env: WAREHOUSE_HOST\n",
        [p],
    )


@form
def trino_password_file() -> Form:
    h = "$2y$10$" + an(53)
    return f"$ cat etc/password.db\nanalyst:{h}\n", [h]


@form
def clickhouse_client() -> Form:
    p = pw()
    return f"clickhouse-client --host {host()} --user {user()} --password {p} --query 'SELECT 1'", [p]


@form
def pg_service() -> Form:
    p = pw()
    return f"# ~/.pg_service.conf\n[prod]\nhost={host()}\nport=5432\ndbname=app\nuser={user()}\npassword={p}\n", [p]


@form
def bigquery_key_field() -> Form:
    key_id = hexs(40)
    return (
        '{\n  "type": "service_account",\n  "project_id": "acme-analytics",\n'
        f'  "private_key_id": "{key_id}",\n  "client_email": "etl@acme-analytics.iam.gserviceaccount.com"\n}}',
        [key_id],
    )


@form
def sqoop_import() -> Form:
    p = pw()
    return (
        f"sqoop import --connect jdbc:mysql://{host()}/shop --username {user()} --password {p} "
        "--table orders --target-dir /data/orders",
        [p],
    )


def main(argv: list[str] | None = None) -> None:
    set_main("data", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()
