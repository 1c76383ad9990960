"""The embedded default service configuration, the bundled ``driftwatch.yaml``.

``driftwatch run`` without ``--config`` runs it
(:func:`~driftwatch.service.config.load_service_config`).

>>> DEFAULT_CONFIG.startswith("# driftwatch service configuration")
True
"""

__all__ = ["DEFAULT_CONFIG"]

#: The embedded default, the same as the bundled ``driftwatch.yaml`` (a test keeps them equal):
#: the demo recording streamed live at one day of event time per wall-clock second.
DEFAULT_CONFIG = """\
# driftwatch service configuration: `driftwatch run --config driftwatch.yaml`.
# Without --config, `driftwatch run` uses this same configuration (built in).
apiVersion: driftwatch/v1
kind: Service

state_dir: state                 # checkpoints, timelines, reports, audit log, MLflow, pool

models:
  - connector: connectors/demo-file.yaml   # where events come from and how they map
    policy: policies/credit-risk-demo.yaml # what to do about drift (hot-reloaded)
    # reference: data/demo/reference.parquet   # default: the policy's model.reference
    # champion: models:/credit-risk@champion   # your registered model (any MLflow flavour);
    #                                          # without it the demo's river stand-in
    live:
      speed: 86400               # file sources: event seconds per wall second (0: no pacing);
                                 # one day per second plays the 140-day demo in ~2.5 min
                                 # (a Kafka connector is never paced: it refuses a speed)
    # batch_size: 500            # events per poll (default 500 when paced, else 10000)

http:
  host: 127.0.0.1                # loopback unless you mean it
  port: 9108                     # /metrics /healthz /readyz /status /reports/ /admin/...
  admin_token_env: DRIFTWATCH_ADMIN_TOKEN   # admin API disabled while this is unset

checkpoint:
  interval: 10s                  # and always on shutdown
  max_age: 2m                    # older than this: /readyz fails, CheckpointTooOld fires
  keep: 2
  disk_retry_max: 1m             # state folder full or read-only: consumption pauses and
                                 # a write is retried (1s, 2s, 4s ... at most this apart)

staleness:
  after: 5m                      # no events for this long: input stale (alarm, alert)

scheduler:                       # wall-clock work (APScheduler)
  misfire_grace_time: 30s        # a run later than this is skipped
  coalesce: true                 # missed runs collapse into one
  actions: 5s                    # run pending actions, poll the GPU pool
  policy_reload: 5s              # pick up policy edits (a bad edit keeps the running policy)
  reference_refresh: 1h          # adopt a changed reference profile
  offpeak_dispatch: 1m           # start deferrable jobs inside off-peak windows
  staleness_check: 15s

actions:
  execute: true                  # run decided actions (false: decide and record only)
  # tracking_uri: http://mlflow:5000   # default: $MLFLOW_TRACKING_URI, else <state_dir>
  mlflow_timeout: 10s            # per HTTP request to MLflow (MLFLOW_HTTP_REQUEST_TIMEOUT)
  mlflow_http_retries: 0         # its HTTP client's own retries (..._MAX_RETRIES)
  mlflow_attempts: 2             # tries per MLflow call before the action backs off
  retry_backoff: 30s             # an action waiting for MLflow tries again after this,
  retry_backoff_max: 10m         # doubling up to this; alerts and webhooks never wait
  shutdown_grace: 5s             # on SIGTERM, how long an MLflow call in flight may finish

pool:
  backend: local                 # local | ray  (Kubernetes: `driftwatch pool render`)
  gpus: 10                       # auto (nvidia-smi), a count, or a list of ids; the demo
                                 # uses 10 logical ids (2 reserved), so a machine without
                                 # GPUs still runs its CPU-only retraining job
  reserve_fraction: 0.2
  offpeak: []                    # e.g. ["22:00-06:00"]: deferrable jobs wait for these
  offpeak_tz: UTC
  offpeak_weekends: true
  # ray:                         # only with backend: ray (README, "Scaling out")
  #   address: http://ray-head:8265     # the dashboard's Job API, not host:6379
  #   namespace: risk-prod              # keeps this daemon's Ray jobs apart from others'
  #   resource: driftwatch_reserved_gpu # what the reserved node advertises instead of GPU
  #                                     # (null: jobs ask for GPU, nothing reserved in Ray)
  #   devices: [0, 1]                   # the reserved node's device ids (default 0, 1, ...)
  #   runtime_env:                      # sent with every job
  #     working_dir: jobs               # uploaded by Ray (relative to this file), or a URI
  #     pip: ["lightgbm==4.3.0"]
  #     env_vars: {OMP_NUM_THREADS: "8"}  # the job's own variables win

metrics:
  feature_cap: 50                # per-feature series per model; the rest are counted as cut

report:                          # served under /reports/ (index: newest first)
  on_done: true                  # write the report when a finite recording is consumed
  on_decision: true              # one report per decision (tier above none, or an action)
  rolling: 15m                   # rewrite <model>/report.html this often (null: never)
  windows: 200                   # the most recent windows a live report covers
  keep: 100                      # decision reports kept per model (the oldest are removed)

timeline:                        # <state>/out/<model>/timeline.jsonl, one line per window
  max_mib: 256                   # rotated into timeline.<n>.jsonl at the first checkpoint past this
  segments: 8                    # rotated segments kept (the oldest are removed)

# group:                         # several instances in one Kafka consumer group that merge
#   enabled: true                # pane sketches; one decides per model (README, "Scaling out")
#   topic: driftwatch.panes      # the pane log (created compacted when missing)
#   idle_timeout: 30s            # a partition without records this long holds no pane
#                                # back (null: a partition always waits for its records)
"""
