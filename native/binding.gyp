{
  "targets": [
    {
      "target_name": "noshell",
      "sources": [
        "spawn.c",
        "stdio.c",
        "resolve.c",
        "child.c",
        "child-signals.c",
        "capture.cc",
        "watch.cc",
        "watch-ops.cc",
        "watch-report.cc",
        "reap-later.cc",
        "executor.c",
        "executor-job.c",
        "env-lock.c",
        "env-snapshot.c",
        "inherited-env.cc",
        "executor-request.cc",
        "executor-addon.cc",
        "executor-results.cc",
        "scrape-lines.c",
        "scrape-number.c",
        "scrape-lines-addon.cc",
        "malloc-tune.cc",
        "addon.cc"
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
      # (test/glibc-baseline.test.ts), so glibc extensions are looked up at
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
