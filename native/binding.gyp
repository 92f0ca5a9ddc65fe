{
  "targets": [
    {
      "target_name": "huge_pages",
      "sources": ["huge-pages.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    }
  ]
}
