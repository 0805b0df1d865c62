-- sample_results.sql — a small results file written by hand (schema version 1 of store.c) for
-- tests/e2e/report_plot.sh.  Build it with: sqlite3 sample.db < sample_results.sql
-- It stays a schema 1 file on purpose (no feasible, throughput, monetary_cost columns): report,
-- export, merge and plot must read older files as they are.
--
-- Expected summary (derived by hand; means over the runs with status 0):
--   alpha, 2, random                        ok 1, failed 0: initial 100, best 100,
--       improvement 0 %, search 0.25 s, sim calls 4
--   tiny, 2, placeto/placeto-gnn/topo       ok 2 (r04, r05), failed 0: initial (1200+800)/2 = 1000,
--       best (900+700)/2 = 800, improvement (25 + 12.5)/2 = 18.75 %, search (10+14)/2 = 12 s,
--       sim calls (50+70)/2 = 60
--   tiny, 2, random                         ok 2 (r01, r02), failed 1 (r03): initial 1024,
--       best (768+512)/2 = 640, improvement (25 + 50)/2 = 37.5 %, search (1.5+2.5)/2 = 2 s,
--       sim calls (100+300)/2 = 200
--   tiny, 4, placeto/placeto-gnn/reversed-topo  ok 1 (r06), failed 2 (r07 crashed, r08 timeout):
--       initial none, best 500, improvement none (no initial), search 3 s, sim calls 10
-- Learning curve of (tiny, 2 devices, placeto / placeto-gnn / topo), graph g1, repeats r04 r05:
--   episode 0: best so far 1100 and 1000 -> mean 1050, sd sqrt(2 * 50^2 / 1) = 70.71
--   episode 2: 950 and 700 -> mean 825, sd sqrt(2 * 125^2) = 176.78
BEGIN;
CREATE TABLE runs(run_id TEXT PRIMARY KEY NOT NULL, experiment TEXT, settings_json TEXT,
  dataset TEXT, graph TEXT, graph_checksum TEXT, n_nodes INTEGER, n_devices INTEGER,
  cluster TEXT, simulator TEXT, simulator_version TEXT, placer TEXT, placer_version TEXT,
  embedding TEXT, embedding_version TEXT, traversal TEXT, traversal_version TEXT,
  repeat INTEGER, seed TEXT, placebench_version TEXT, status INTEGER, error TEXT,
  initial_us REAL, best_us REAL, search_wall_s REAL, sim_calls INTEGER, started_at REAL,
  finished_at REAL);
CREATE TABLE meta(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
CREATE TABLE experiment(name TEXT NOT NULL, config_json TEXT, seed TEXT, created_at REAL);
CREATE TABLE curve(run_id TEXT NOT NULL REFERENCES runs(run_id), episode INTEGER NOT NULL,
  episode_best_us REAL, best_so_far_us REAL, sim_calls INTEGER, wall_s REAL);
CREATE INDEX curve_run ON curve(run_id, episode);
INSERT INTO meta VALUES ('schema_version', '1'), ('placebench_version', '0.1.0 (git sample)'),
  ('created_at', '1700000000');
INSERT INTO experiment VALUES ('sample', '{"name":"sample"}', '18446744073709551615', 1700000000);

INSERT INTO runs(run_id, experiment, settings_json, dataset, graph, graph_checksum, n_nodes,
  n_devices, cluster, simulator, simulator_version, placer, placer_version, embedding,
  embedding_version, traversal, traversal_version, repeat, seed, placebench_version, status,
  error, initial_us, best_us, search_wall_s, sim_calls, started_at, finished_at) VALUES
('r01', 'sample', '{"r":1}', 'tiny', 'g1', 'c1', 5, 2, 'k80', 'placeto', '1.0', 'random', '1.0',
  NULL, NULL, NULL, NULL, 0, '11', '0.1.0', 0, NULL, 1024, 768, 1.5, 100, 1700000001, 1700000002),
('r02', 'sample', '{"r":2}', 'tiny', 'g1', 'c1', 5, 2, 'k80', 'placeto', '1.0', 'random', '1.0',
  NULL, NULL, NULL, NULL, 1, '12', '0.1.0', 0, NULL, 1024, 512, 2.5, 300, 1700000001, 1700000003),
('r03', 'sample', '{"r":3}', 'tiny', 'g1', 'c1', 5, 2, 'k80', 'placeto', '1.0', 'random', '1.0',
  NULL, NULL, NULL, NULL, 2, '13', '0.1.0', 1, 'simulator: out of memory', NULL, NULL, 0.5, 7,
  1700000001, 1700000002),
('r04', 'sample', '{"r":4}', 'tiny', 'g1', 'c1', 5, 2, 'k80', 'placeto', '1.0', 'placeto', '1.0',
  'placeto-gnn', '1.0', 'topo', '1.0', 0, '14', '0.1.0', 0, NULL, 1200, 900, 10, 50,
  1700000001, 1700000011),
('r05', 'sample', '{"r":5}', 'tiny', 'g1', 'c1', 5, 2, 'k80', 'placeto', '1.0', 'placeto', '1.0',
  'placeto-gnn', '1.0', 'topo', '1.0', 1, '15', '0.1.0', 0, NULL, 800, 700, 14, 70,
  1700000001, 1700000015),
('r06', 'sample', '{"r":6}', 'tiny', 'g1', 'c1', 5, 4, 'k80', 'placeto', '1.0', 'placeto', '1.0',
  'placeto-gnn', '1.0', 'reversed-topo', '1.0', 0, '16', '0.1.0', 0, NULL, NULL, 500, 3, 10,
  1700000001, 1700000004),
('r07', 'sample', '{"r":7}', 'tiny', 'g1', 'c1', 5, 4, 'k80', 'placeto', '1.0', 'placeto', '1.0',
  'placeto-gnn', '1.0', 'reversed-topo', '1.0', 1, '17', '0.1.0', 2, 'killed by signal 11', NULL,
  NULL, NULL, 0, 1700000001, 1700000002),
('r08', 'sample', '{"r":8}', 'tiny', 'g1', 'c1', 5, 4, 'k80', 'placeto', '1.0', 'placeto', '1.0',
  'placeto-gnn', '1.0', 'reversed-topo', '1.0', 2, '18', '0.1.0', 3, 'run exceeded 60 s | killed',
  NULL, NULL, NULL, 0, 1700000001, 1700000061),
('r10', 'sample', '{"r":10}', 'alpha', 'a1', 'c2', 3, 2, 'k80', 'placeto', '1.0', 'random', '1.0',
  NULL, NULL, NULL, NULL, 0, '20', '0.1.0', 0, NULL, 100, 100, 0.25, 4, 1700000001, 1700000002);

INSERT INTO curve(run_id, episode, episode_best_us, best_so_far_us, sim_calls, wall_s) VALUES
('r04', 0, 1100, 1100, 10, 3), ('r04', 1, 950, 950, 20, 6), ('r04', 2, 1000, 950, 30, 9),
('r05', 0, 1000, 1000, 14, 4), ('r05', 1, 750, 750, 28, 8), ('r05', 2, 700, 700, 42, 12);
COMMIT;
