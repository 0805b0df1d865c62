-- heterps_results.sql — a small HeterPS results file written by hand (schema version 2 of
-- store.c) for tests/e2e/heterps_report.sh.  Build it with: sqlite3 h.db < heterps_results.sql
--
-- Runs of the heterps simulator (graph, T = n_devices, placer: cost USD, throughput, wall s):
--   ctrdnn-8  (8 layers),  T = 2: heterps h1 4.0 1.2e6 2.0, h2 4.0 1.2e6 3.0;
--                                 greedy g1 5.0 1.25e6 0.001; brute-force b1 4.0 1.2e6 0.0001
--   ctrdnn-8,              T = 4: brute-force b4 3.5 1.3e6 0.02
--   ctrdnn-16 (16 layers), T = 2: heterps h3 9.0 1.1e6 1.0, h4 10.0 1.3e6 1.0;
--                                 greedy g2 14.25 1.2e6 0.002; brute-force b2 9.0 1.1e6 0.03;
--                                 all-cpu c1 failed (no verdict)
--   one run of another simulator (placeto), which the HeterPS tables leave out.
--   Fig. 4 runs of heterps on ctrdnn-16 (simulator options in settings_json), which the tables
--   above leave out: TL x 0.5: PROVISION f1 10.0, StaPSRatio f2 12.0, StaRatio f3 15.0; TL x 1:
--   StaPSRatio f5 9.0, StaRatio f6 19.0 (PROVISION: h3, h4 above); TL x 2: StaRatio f7 failed.
-- Expected (derived by hand):
--   cost, T = 2: ctrdnn-16: heterps mean 9.5, spread [9-10]; greedy 14.25, gap (14.25 - 9.5) /
--     9.5 = +50.0 %; brute-force 9, gap -0.5 / 9.5 = -5.3 %; all-cpu failed (1 run).
--     ctrdnn-8: heterps 4 (+0.0 %); greedy 5, +25.0 %; brute-force 4, +0.0 %.
--   throughput, T = 2: ctrdnn-16 heterps (1.1e6 + 1.3e6) / 2 = 1.2e6, 2 of 2 feasible.
--   scheduling time, T = 2: heterps ctrdnn-8 (2 + 3) / 2 = 2.5 s, ctrdnn-16 1 s.
--   Table 2: 8 layers: BF(2) 0.0001 s, BF(4) 0.0200 s, RL 2.500 s, RL = BF(2) (4 = 4);
--            16 layers: BF(2) 0.0300 s, no BF(4) run, RL 1.000 s, RL 9-10 vs BF 9: no.
--   Fig. 4, ctrdnn-16: x 0.5: ours 10.00, StaPSRatio 12/10 = 1.20x, +20.0 %, StaRatio 1.50x,
--     +50.0 %, order holds (10 < 12 < 15); x 1: ours 9.50, StaPSRatio 9/9.5 = 0.95x, -5.3 %,
--     StaRatio 19/9.5 = 2.00x, +100.0 %, order does not hold; x 2: no PROVISION run ("-"),
--     StaRatio failed (1 run); ctrdnn-8 has no static run, so no line.
BEGIN;
CREATE TABLE runs(run_id TEXT PRIMARY KEY NOT NULL, experiment TEXT, settings_json TEXT,
  dataset TEXT, graph TEXT, graph_checksum TEXT, n_nodes INTEGER, n_devices INTEGER,
  cluster TEXT, simulator TEXT, simulator_version TEXT, placer TEXT, placer_version TEXT,
  embedding TEXT, embedding_version TEXT, traversal TEXT, traversal_version TEXT,
  repeat INTEGER, seed TEXT, placebench_version TEXT, status INTEGER, error TEXT,
  initial_us REAL, best_us REAL, search_wall_s REAL, sim_calls INTEGER, started_at REAL,
  finished_at REAL, feasible INTEGER, throughput REAL, monetary_cost REAL);
CREATE TABLE meta(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
CREATE TABLE experiment(name TEXT NOT NULL, config_json TEXT, seed TEXT, created_at REAL);
CREATE TABLE curve(run_id TEXT NOT NULL REFERENCES runs(run_id), episode INTEGER NOT NULL,
  episode_best_us REAL, best_so_far_us REAL, sim_calls INTEGER, wall_s REAL);
CREATE INDEX curve_run ON curve(run_id, episode);
CREATE TABLE log(run_id TEXT PRIMARY KEY NOT NULL REFERENCES runs(run_id), text TEXT NOT NULL);
CREATE TABLE claim(run_id TEXT PRIMARY KEY NOT NULL, host TEXT NOT NULL, boot_id TEXT NOT NULL,
  pid INTEGER NOT NULL, start_time INTEGER NOT NULL, claimed_at REAL);
INSERT INTO meta VALUES('schema_version', '2');
INSERT INTO meta VALUES('placebench_version', '0.1.0 (git test)');
INSERT INTO experiment VALUES('hx', '{"name":"hx"}', '1', 1700000000);
INSERT INTO runs VALUES
 ('h1','hx','{}','d','ctrdnn-8.json','c8',8,2,'heterps-types','heterps','1.0','heterps','1.0',NULL,NULL,NULL,NULL,0,'11','t',0,NULL,NULL,3.0e9,2.0,100,1,2,1,1.2e6,4.0),
 ('h2','hx','{}','d','ctrdnn-8.json','c8',8,2,'heterps-types','heterps','1.0','heterps','1.0',NULL,NULL,NULL,NULL,1,'12','t',0,NULL,NULL,3.0e9,3.0,100,1,2,1,1.2e6,4.0),
 ('g1','hx','{}','d','ctrdnn-8.json','c8',8,2,'heterps-types','heterps','1.0','greedy','1.0',NULL,NULL,NULL,NULL,0,'13','t',0,NULL,NULL,2.9e9,0.001,16,1,2,1,1.25e6,5.0),
 ('b1','hx','{}','d','ctrdnn-8.json','c8',8,2,'heterps-types','heterps','1.0','brute-force','1.0',NULL,NULL,NULL,NULL,0,'14','t',0,NULL,NULL,3.0e9,0.0001,256,1,2,1,1.2e6,4.0),
 ('b4','hx','{}','d','ctrdnn-8.json','c8',8,4,'heterps-types','heterps','1.0','brute-force','1.0',NULL,NULL,NULL,NULL,0,'15','t',0,NULL,NULL,2.8e9,0.02,65536,1,2,1,1.3e6,3.5),
 ('h3','hx','{}','d','ctrdnn-16.json','c16',16,2,'heterps-types','heterps','1.0','heterps','1.0',NULL,NULL,NULL,NULL,0,'16','t',0,NULL,NULL,3.3e9,1.0,100,1,2,1,1.1e6,9.0),
 ('h4','hx','{}','d','ctrdnn-16.json','c16',16,2,'heterps-types','heterps','1.0','heterps','1.0',NULL,NULL,NULL,NULL,1,'17','t',0,NULL,NULL,2.8e9,1.0,100,1,2,1,1.3e6,10.0),
 ('g2','hx','{}','d','ctrdnn-16.json','c16',16,2,'heterps-types','heterps','1.0','greedy','1.0',NULL,NULL,NULL,NULL,0,'18','t',0,NULL,NULL,3.0e9,0.002,32,1,2,1,1.2e6,14.25),
 ('b2','hx','{}','d','ctrdnn-16.json','c16',16,2,'heterps-types','heterps','1.0','brute-force','1.0',NULL,NULL,NULL,NULL,0,'19','t',0,NULL,NULL,3.3e9,0.03,65536,1,2,1,1.1e6,9.0),
 ('c1','hx','{}','d','ctrdnn-16.json','c16',16,2,'heterps-types','heterps','1.0','all-cpu','1.0',NULL,NULL,NULL,NULL,0,'20','t',1,'no plan meets the throughput limit and the resource limits',NULL,NULL,0.00001,0,1,2,NULL,NULL,NULL),
 ('p1','hx','{}','d','g.json','cg',4,2,'placeto-k80','placeto','1.0','random','1.0',NULL,NULL,NULL,NULL,0,'21','t',0,NULL,200,100,0.5,10,1,2,1,0,0),
 ('f1','hx','{"simulator":{"name":"heterps","options":{"tl_scale":"0.5"}}}','d','ctrdnn-16.json','c16',16,2,'heterps-types','heterps','1.0','heterps','1.0',NULL,NULL,NULL,NULL,0,'22','t',0,NULL,NULL,6.0e9,1.0,100,1,2,1,6.0e5,10.0),
 ('f2','hx','{"simulator":{"name":"heterps","options":{"provision":"sta-ps-ratio","tl_scale":"0.5"}}}','d','ctrdnn-16.json','c16',16,2,'heterps-types','heterps','1.0','heterps','1.0',NULL,NULL,NULL,NULL,0,'23','t',0,NULL,NULL,6.0e9,1.0,100,1,2,1,6.0e5,12.0),
 ('f3','hx','{"simulator":{"name":"heterps","options":{"provision":"sta-ratio","tl_scale":"0.5"}}}','d','ctrdnn-16.json','c16',16,2,'heterps-types','heterps','1.0','heterps','1.0',NULL,NULL,NULL,NULL,0,'24','t',0,NULL,NULL,6.0e9,1.0,100,1,2,1,6.0e5,15.0),
 ('f5','hx','{"simulator":{"name":"heterps","options":{"provision":"sta-ps-ratio"}}}','d','ctrdnn-16.json','c16',16,2,'heterps-types','heterps','1.0','heterps','1.0',NULL,NULL,NULL,NULL,0,'25','t',0,NULL,NULL,3.0e9,1.0,100,1,2,1,1.2e6,9.0),
 ('f6','hx','{"simulator":{"name":"heterps","options":{"provision":"sta-ratio","tl_scale":"1"}}}','d','ctrdnn-16.json','c16',16,2,'heterps-types','heterps','1.0','heterps','1.0',NULL,NULL,NULL,NULL,0,'26','t',0,NULL,NULL,3.0e9,1.0,100,1,2,1,1.2e6,19.0),
 ('f7','hx','{"simulator":{"name":"heterps","options":{"provision":"sta-ratio","tl_scale":"2"}}}','d','ctrdnn-16.json','c16',16,2,'heterps-types','heterps','1.0','heterps','1.0',NULL,NULL,NULL,NULL,0,'27','t',1,'no plan meets the throughput limit and the resource limits',NULL,NULL,1.0,100,1,2,NULL,NULL,NULL);
COMMIT;
