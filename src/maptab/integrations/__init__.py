"""Adapters that let other tools use maptab (``docs/guides/evaluation-harnesses.md``): inspect_ai tasks
(:mod:`maptab.integrations.inspect_tasks`, extra ``maptab[inspect]``) and the lmms-eval task
folder (:mod:`maptab.integrations.lmms`). Each is one adapter over the task registry
(:mod:`maptab.tasks`); the RL rewards and their TRL/verl exports live in
:mod:`maptab.rewards`."""
