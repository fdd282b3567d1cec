// Package gocqltest runs gocql (Debian's golang-github-gocql-gocql-dev) against `quarry serve
// --cql`: a session that discovers the one node through system.local and system.peers, queries
// on protocol v4 with and without LZ4, many queries at once on the session's connections, a
// table written and read back page by page, computed selectors (now() on system.local, a UDT's
// fields), an index on a set, and PasswordAuthenticator with a good and a bad password.
// tests/server/test_cql_gocql.py builds it and runs it with QUARRY_CQL_HOST and
// QUARRY_CQL_PORT set, and QUARRY_CQL_USER and QUARRY_CQL_PASSWORD when the server has
// --cql-credentials.
package gocqltest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/gocql/gocql/lz4"
)

func cluster(t *testing.T) *gocql.ClusterConfig {
	port, err := strconv.Atoi(os.Getenv("QUARRY_CQL_PORT"))
	if err != nil {
		t.Fatalf("QUARRY_CQL_PORT: %v", err)
	}
	c := gocql.NewCluster(os.Getenv("QUARRY_CQL_HOST"))
	c.Port = port
	c.ProtoVersion = 4
	c.Timeout = 10 * time.Second
	c.ConnectTimeout = 10 * time.Second
	c.NumConns = 2
	c.Consistency = gocql.LocalOne
	if user := os.Getenv("QUARRY_CQL_USER"); user != "" {
		c.Authenticator = gocql.PasswordAuthenticator{Username: user,
			Password: os.Getenv("QUARRY_CQL_PASSWORD")}
	}
	return c
}

func releaseVersion(t *testing.T, c *gocql.ClusterConfig) {
	s, err := c.CreateSession()
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	defer s.Close()
	var release, cqlVersion string
	if err := s.Query("SELECT release_version, cql_version FROM system.local").Scan(&release,
		&cqlVersion); err != nil {
		t.Fatalf("SELECT FROM system.local: %v", err)
	}
	if !strings.HasPrefix(release, "4.") || !strings.HasPrefix(cqlVersion, "3.") {
		t.Fatalf("release_version %q, cql_version %q: not a Cassandra 4 node", release, cqlVersion)
	}
}

func TestConnectAndQuery(t *testing.T) {
	releaseVersion(t, cluster(t))
}

func TestConnectWithLZ4(t *testing.T) {
	c := cluster(t)
	c.Compressor = lz4.LZ4Compressor{}
	releaseVersion(t, c)
}

func TestManyQueriesAtOnce(t *testing.T) {
	s, err := cluster(t).CreateSession()
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for i := 0; i < 400; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var key string
			if err := s.Query("SELECT key FROM system.local").Scan(&key); err != nil {
				errs <- err
			} else if key != "local" {
				errs <- fmt.Errorf("system.local's key is %q", key)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a concurrent query failed: %v", err)
	}
}

func TestWrongPasswordIsRefused(t *testing.T) {
	c := cluster(t)
	auth, ok := c.Authenticator.(gocql.PasswordAuthenticator)
	if !ok {
		t.Skip("the server has no --cql-credentials")
	}
	auth.Password += "-wrong"
	c.Authenticator = auth
	_, err := c.CreateSession()
	if err == nil {
		t.Fatal("a session opened with a wrong password")
	}
	if !strings.Contains(err.Error(), "Provided username "+auth.Username+
		" and/or password are incorrect") {
		t.Fatalf("unexpected error for a wrong password: %v", err)
	}
}

func TestWriteAndReadBackInPages(t *testing.T) {
	s, err := cluster(t).CreateSession()
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	defer s.Close()
	ks := fmt.Sprintf("go_%d", time.Now().UnixNano()%1000000)
	if err := s.Query("CREATE KEYSPACE " + ks + " WITH replication = {'class': " +
		"'SimpleStrategy', 'replication_factor': 1}").Exec(); err != nil {
		t.Fatalf("CREATE KEYSPACE: %v", err)
	}
	if err := s.Query("CREATE TABLE " + ks + ".events (user text, at int, what text, " +
		"PRIMARY KEY (user, at))").Exec(); err != nil {
		t.Fatalf("CREATE TABLE: %v", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 120)
	for i := 0; i < 120; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs <- s.Query("INSERT INTO "+ks+".events (user, at, what) VALUES (?, ?, ?)",
				"ada", i, fmt.Sprintf("event %d", i)).Exec()
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("INSERT: %v", err)
		}
	}
	iter := s.Query("SELECT at, what FROM "+ks+".events WHERE user = ?", "ada").PageSize(50).Iter()
	var at int
	var what string
	n := 0
	for iter.Scan(&at, &what) {
		if at != n || what != fmt.Sprintf("event %d", n) {
			t.Fatalf("row %d: at %d, what %q", n, at, what)
		}
		n++
	}
	if err := iter.Close(); err != nil {
		t.Fatalf("SELECT: %v", err)
	}
	if n != 120 {
		t.Fatalf("read back %d rows, not 120", n)
	}
}

func TestComputedSelectorsAndCollectionIndexes(t *testing.T) {
	s, err := cluster(t).CreateSession()
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	defer s.Close()
	// the server's clock, as tools read it
	var now time.Time
	var id gocql.UUID
	if err := s.Query("SELECT toTimestamp(now()), now() FROM system.local").Scan(&now,
		&id); err != nil {
		t.Fatalf("SELECT now() FROM system.local: %v", err)
	}
	if d := time.Since(now); d < -5*time.Second || d > 5*time.Second || id.Version() != 1 {
		t.Fatalf("toTimestamp(now()) %v, now() %v", now, id)
	}
	ks := fmt.Sprintf("gs_%d", time.Now().UnixNano()%1000000)
	for _, stmt := range []string{
		"CREATE KEYSPACE " + ks + " WITH replication = {'class': 'SimpleStrategy', " +
			"'replication_factor': 1}",
		"CREATE TYPE " + ks + ".addr (street text, zip int)",
		"CREATE TABLE " + ks + ".people (id int PRIMARY KEY, home frozen<addr>, work addr, " +
			"tags set<text>)",
		"CREATE INDEX ON " + ks + ".people (tags)",
		"INSERT INTO " + ks + ".people (id, home, work, tags) VALUES (1, {street: 'Elm', " +
			"zip: 5}, {street: 'Oak', zip: 6}, {'a', 'b'})",
	} {
		if err := s.Query(stmt).Exec(); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	// a UDT field of a frozen and a non-frozen column, by the name Cassandra gives it
	iter := s.Query("SELECT home.zip, work.street FROM " + ks + ".people WHERE id = 1").Iter()
	cols := iter.Columns()
	var zip int
	var street string
	if !iter.Scan(&zip, &street) {
		t.Fatalf("no row: %v", iter.Close())
	}
	if err := iter.Close(); err != nil {
		t.Fatalf("SELECT home.zip: %v", err)
	}
	if len(cols) != 2 || cols[0].Name != "home.zip" || cols[1].Name != "work.street" ||
		zip != 5 || street != "Oak" {
		t.Fatalf("columns %+v, values %d %q", cols, zip, street)
	}
	// the index on the set answers CONTAINS, once built
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got int
		err := s.Query("SELECT id FROM "+ks+".people WHERE tags CONTAINS ?", "b").Scan(&got)
		if err == nil && got == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("SELECT ... CONTAINS 'b': %d, %v", got, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// the index's target as the schema tables give it
	var options map[string]string
	if err := s.Query("SELECT options FROM system_schema.indexes WHERE keyspace_name = ? AND "+
		"table_name = 'people' AND index_name = 'people_tags_idx'", ks).Scan(&options); err != nil {
		t.Fatalf("SELECT FROM system_schema.indexes: %v", err)
	}
	if options["target"] != "values(tags)" {
		t.Fatalf("index options %v", options)
	}
}
