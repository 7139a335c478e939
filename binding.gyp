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
        "native/addon.cc"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")"
      ],
      "defines": [
        "NAPI_VERSION=8",
        "NAPI_DISABLE_CPP_EXCEPTIONS",
        "NODE_ADDON_API_DISABLE_DEPRECATED"
      ],
      "cflags": ["-Wall", "-Wextra", "-O2", "-fvisibility=hidden"],
      "ldflags": [
        "-Wl,-z,now"
      ],
      "cflags_c": ["-std=gnu11"],
      "cflags_cc": ["-std=gnu++17"]
    }
  ]
}
