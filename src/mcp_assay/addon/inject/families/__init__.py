"""The ``--inject`` families, one module each: every module here declares its ``FAMILY`` and its ``CASES``.

The registry (:mod:`mcp_assay.addon.inject.registry`) finds the modules of this package by
themselves, so a new family is a new module here (its cases, with their actions and the checks
that judge them) and nothing else in the injector.
"""
