{
  "targets": [
    {
      "target_name": "noshell",
      "sources": [
        "native/spawn.c",
        "native/stdio.c",
        "native/resolve.c",
        "native/child.c",
        "native/capture.cc",
        "native/watch.cc",
        "native/watch-ops.cc",
        "native/watch-report.cc",
        "native/reap-later.cc",
        "native/executor.c",
        "native/executor-job.c",
        "native/env-lock.c",
        "native/env-snapshot.c",
        "native/inherited-env.cc",
        "native/executor-request.cc",
        "native/executor-addon.cc",
        "native/executor-results.cc",
        "native/addon.cc"
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
