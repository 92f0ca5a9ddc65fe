{
  "targets": [
    {
      "target_name": "huge_pages",
      "sources": ["huge-pages.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    },
    {
      "target_name": "payload_fill",
      "sources": ["payload-fill.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    },
    {
      "target_name": "block_io",
      "sources": ["block-io.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    }
  ]
}
