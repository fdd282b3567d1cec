"""A `quarry serve --cql` server as the CQL tests use it: where its CQL and HTTP listeners are
(read from the banner) and Python driver clusters and sessions opened on it, optionally in a
keyspace created for them, all shut by close(). The driver is imported only when a cluster is
opened. It neither starts nor stops the process: conftest.py's cql_server and shared_cql
fixtures do, by the pid they started."""
import re

SIMPLE = "{'class': 'SimpleStrategy', 'replication_factor': 1}"


def keyspaces(session):
    """The names of the keyspaces the server holds, the system ones too."""
    return {r.keyspace_name for r in session.execute(
        "SELECT keyspace_name FROM system_schema.keyspaces")}


def use_new_keyspace(session, keyspace, replication=SIMPLE):
    """Creates keyspace with replication and makes it the session's."""
    session.execute("CREATE KEYSPACE %s WITH replication = %s" % (keyspace, replication))
    session.set_keyspace(keyspace)


class CqlServer:
    def __init__(self, server):
        self.server = server
        m = re.search(r"CQL: listening on (\S+) port (\d+)", server.banner)
        assert m, "no CQL line in the banner: %r" % server.banner
        self.host = m.group(1)
        self.port = int(m.group(2))
        self.http_port = server.port
        self.url = server.url
        self.data_dir = server.data_dir
        self.banner = server.banner
        self.proc = server.proc
        self._clusters = []

    def log(self):
        return self.server.log()

    def cluster(self, protocol_version=4, **kw):
        """A driver Cluster on this server (round-robin in its default profile: the driver
        guesses no datacenter), shut by close(). protocol_version=None lets the driver
        negotiate; kw goes to Cluster."""
        from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
        from cassandra.policies import RoundRobinPolicy
        if protocol_version is not None:
            kw["protocol_version"] = protocol_version
        kw.setdefault("execution_profiles", {
            EXEC_PROFILE_DEFAULT: ExecutionProfile(load_balancing_policy=RoundRobinPolicy())})
        kw.setdefault("connect_timeout", 10)
        kw.setdefault("control_connection_timeout", 10)
        c = Cluster([self.host], port=self.port, **kw)
        self._clusters.append(c)
        return c

    def session(self, keyspace=None, replication=SIMPLE, **kw):
        """A connected Session (its Cluster is session.cluster); with keyspace, that keyspace
        is created with replication and made the session's. kw goes to cluster()."""
        s = self.cluster(**kw).connect()
        if keyspace is not None:
            use_new_keyspace(s, keyspace, replication)
        return s

    def close(self):
        """Shuts every cluster opened here."""
        for c in self._clusters:
            c.shutdown()
        self._clusters = []

    def stop(self, timeout=30):
        """close(), then SIGTERM the server and wait: its exit status."""
        self.close()
        return self.server.stop(timeout)
