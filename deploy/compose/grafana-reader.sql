-- The role Grafana's Warehouse datasource logs in as (deploy/grafana/provisioning/datasources/
-- warehouse.yaml): it may read the models the HR overview dashboard shows, and nothing else of
-- the warehouse (no employees table, no names). A view reads its tables with its owner's
-- rights, so the views need no grant on what they read. Run by compose's grafana-reader service
-- after migrate, as the warehouse's owner, with psql (15 or later), the password from the
-- environment (not the command line, which other processes can read):
--   GRAFANA_DB_PASSWORD=… psql -X -v ON_ERROR_STOP=1 -v schema=hr -f grafana-reader.sql
-- Idempotent: it creates the role once and sets its password and grants at every run, so a new
-- password in deploy/.env takes effect at the next `docker compose up`.
-- scripts/deploycheck's TestGrafanaReaderRole runs it on a migrated warehouse, then every query
-- of the dashboard as that role, and checks the role cannot read employees.

\getenv password GRAFANA_DB_PASSWORD
\if :{?password}
\else
DO $$ BEGIN RAISE EXCEPTION 'GRAFANA_DB_PASSWORD is not set: the role grafana_hr needs a password'; END $$;
\endif
SELECT NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'grafana_hr') AS create_role \gset
\if :create_role
CREATE ROLE grafana_hr LOGIN;
\endif
ALTER ROLE grafana_hr WITH LOGIN PASSWORD :'password';
-- No JIT for its sessions, as hrsync's own have none: the planner costs the model views far above
-- jit_above_cost, and compiling one took seconds where reading it took milliseconds
-- (docs/models.md#on-postgres-no-jit).
ALTER ROLE grafana_hr SET jit = off;
GRANT USAGE ON SCHEMA :"schema" TO grafana_hr;
GRANT SELECT ON :"schema".model_headcount_monthly, :"schema".model_starters_leavers_monthly,
    :"schema".model_turnover_monthly, :"schema".model_absence_monthly, :"schema".model_bradford
    TO grafana_hr;
