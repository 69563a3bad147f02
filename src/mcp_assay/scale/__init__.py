"""Judging many recordings at once: on every core of this machine, or on a Dask cluster.

``mcp-assay validate`` cuts its work into *units* (:mod:`~mcp_assay.scale.units`): a recording, or one
share of a long one, each judged on its own by :func:`~mcp_assay.scale.units.judge_unit` in whatever
process runs it, local (:mod:`~mcp_assay.scale.local`) or a cluster's worker
(:mod:`~mcp_assay.scale.cluster`). Each unit's result is the judge's state before its verdicts plus
what the report says of the file; :func:`~mcp_assay.scale.reduce.reduce_units` merges them, in the
order of the recordings, into the one report judging them one after the other gives, byte for byte
(its timings aside). :mod:`~mcp_assay.scale.locations` turns the user's arguments (files, folders,
globs, fsspec URLs) into the recordings to judge.
"""
