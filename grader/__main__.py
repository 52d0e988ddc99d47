from grader.cli import main

if __name__ == "__main__":   # not when a Dask worker process (multiprocessing spawn) imports it
    raise SystemExit(main())
