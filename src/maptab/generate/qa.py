"""The QA types moved to :mod:`maptab.qa` (they are domain: the baselines and the integrity
check compute answers with them, not only the builder); the builder's names stay here."""

from maptab.qa import (
    CAPABILITIES,
    QA_TYPES,
    QAError,
    QAType,
    qa_answer,
    qa_answer_of,
    qa_question,
    qa_templates,
    qa_type,
    round2,
    sample_qa_params,
)

__all__ = [
    "CAPABILITIES",
    "QA_TYPES",
    "QAError",
    "QAType",
    "qa_answer",
    "qa_answer_of",
    "qa_question",
    "qa_templates",
    "qa_type",
    "round2",
    "sample_qa_params",
]
