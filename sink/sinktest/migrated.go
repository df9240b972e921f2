package sinktest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/lib/pq"

	"github.com/hrsync/hrsync/sink"
)

// MigratedSchema is the warehouse schema of MigratedPostgres's databases.
const MigratedSchema = "hr"

// template is the database MigratedPostgres copies: made and migrated once per test process,
// dropped by Main.
var template struct {
	once sync.Once
	name string // "" when the server would not make one: each test migrates its own schema
	err  error
}

// MigratedPostgres is Postgres for a test that wants a current warehouse and nothing else: a
// libpq URL of a database of the test's own, whose schema (MigratedSchema) is migrated
// already, and that schema's name. The database is a copy (CREATE DATABASE … TEMPLATE) of one
// migrated once per test process: migrating a schema is every migration and its history
// triggers, seconds under the race detector, where the copy takes a fraction of one. It is
// dropped after the test ends, in the background (see dropLater), the process waiting for the
// drops before it exits. Where the server makes no databases (a role without CREATEDB in
// HRSYNC_TEST_DATABASE_URL), it is Postgres's fresh schema, migrated here.
func MigratedPostgres(t testing.TB) (url, schema string) {
	t.Helper()
	s, err := get()
	if err != nil {
		t.Fatalf("sinktest: %v", err)
	}
	template.once.Do(func() { template.name, template.err = makeTemplate(s) })
	if template.err != nil {
		t.Fatalf("sinktest: %v", template.err)
	}
	if template.name == "" {
		url, schema = Postgres(t)
		if _, err := sink.Migrate(context.Background(), url, sink.Options{Schema: schema}); err != nil {
			t.Fatalf("sinktest: migrate: %v", err)
		}
		return url, schema
	}
	name := "hrsync_" + newSchemaName()
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	if _, err := s.db.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name)+" TEMPLATE "+pq.QuoteIdentifier(template.name)); err != nil {
		t.Fatalf("sinktest: copying the migrated template on %s: %v", s.source, err)
	}
	t.Cleanup(func() {
		if err := dropLater(s, name); err != nil {
			t.Errorf("sinktest: %v", err)
		}
	})
	if url, err = withDatabase(s.url, name); err != nil {
		t.Fatalf("sinktest: %v", err)
	}
	return url, MigratedSchema
}

// makeTemplate makes the template database and migrates its MigratedSchema; "" and no error
// when the server refuses to make databases.
func makeTemplate(s *server) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	name := "hrsync_template_" + newSchemaName()
	if _, err := s.db.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name)); err != nil {
		return "", nil // no CREATEDB: each test migrates a fresh schema instead
	}
	url, err := withDatabase(s.url, name)
	if err != nil {
		return "", err
	}
	if _, err := sink.Migrate(ctx, url, sink.Options{Schema: MigratedSchema, MaxOpenConns: 1}); err != nil {
		return "", fmt.Errorf("migrating the template database %s on %s: %w", name, s.source, err)
	}
	return name, nil
}

// dropTemplate drops the template database, if this process made one (Main, after the tests).
func dropTemplate(s *server) error {
	if template.name == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), dropBatchTimeout)
	defer cancel()
	if _, err := s.db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(template.name)+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("dropping the template database %s: %w", template.name, err)
	}
	return nil
}
