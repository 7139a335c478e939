{
  "targets": [
    {
      "target_name": "noshell",
      "sources": [
        "core/spawn.c",
        "core/stdio.c",
        "core/resolve.c",
        "core/child.c",
        "core/child-signals.c",
        "napi/capture.cc",
        "napi/watch.cc",
        "napi/watch-ops.cc",
        "napi/watch-report.cc",
        "napi/reap-later.cc",
        "executor/executor.c",
        "executor/executor-job.c",
        "executor/env-lock.c",
        "executor/env-snapshot.c",
        "napi/inherited-env.cc",
        "napi/executor-request.cc",
        "napi/executor-addon.cc",
        "napi/executor-results.cc",
        "metrics/scrape-lines.c",
        "metrics/scrape-number.c",
        "napi/scrape-lines-addon.cc",
        "napi/malloc-tune.cc",
        "napi/child-setup.cc",
        "napi/output-value.cc",
        "executor/output-runs.c",
        "napi/addon.cc"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")"
      ],
      "defines": [
        "NAPI_VERSION=8",
        "NAPI_DISABLE_CPP_EXCEPTIONS",
        # A worker terminated mid-call makes every N-API call fail; an error
        # the addon then throws cannot be thrown. Without this, node-addon-api
        # calls that fatal and aborts the whole process (issue 8 review).
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS",
        "NODE_ADDON_API_DISABLE_DEPRECATED"
      ],
      "cflags": ["-Wall", "-Wextra", "-O2", "-fvisibility=hidden"],
      # -z nodelete: reaper threads run this library's code after Node
      # unloads a worker's copy (reap-later.cc). No other link flags: the
      # prebuild must need nothing newer than glibc 2.28 / GCC 8's libstdc++
      # (test/package/glibc-baseline.test.ts), so glibc extensions are looked up at
      # run time (addon.cc) and no static libstdc++ is linked in.
      "ldflags": [
        "-Wl,-z,now",
        "-Wl,-z,nodelete"
      ],
      "cflags_c": ["-std=gnu11"],
      "cflags_cc": ["-std=gnu++17"]
    }
  ]
}
