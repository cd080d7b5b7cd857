"""Answer correctness judged by an LLM: claims of both answers, counted in one call.

The system message (data rule, reply format) is fixed so a custom prompt cannot weaken either; a
list of reference alternatives keeps the best F1, as the deterministic metrics do.
"""

from __future__ import annotations

from typing import Any

from pytest_graphrag_eval.answers.claims import ClaimCounts, parse_claim_counts
from pytest_graphrag_eval.answers.metric import (
    AnswerInputs,
    JudgeFailure,
    LLMJudgedMetric,
    blank_input_error,
    gather_all,
    response_format,
)
from pytest_graphrag_eval.answers.prompts import DATA_RULE
from pytest_graphrag_eval.llm.judge import Judge, Usage
from pytest_graphrag_eval.llm.prompts import PromptTemplate

SYSTEM_MESSAGE = (
    DATA_RULE + "\n\nReply with one JSON object and nothing else. Its fields:\n"
    "- reference_claims_count: integer >= 1, the number of claims in the reference answer\n"
    "- actual_claims_count: integer >= 1, the number of claims in the actual answer\n"
    "- matching_claims_count: integer from 0 to the smaller of the two counts, the number of claims "
    "of the actual answer that match a reference claim\n"
    "- reason: one or two sentences explaining the counts"
)

REPLY_PROPERTIES = {
    "reference_claims_count": {"type": "integer"},
    "actual_claims_count": {"type": "integer"},
    "matching_claims_count": {"type": "integer"},
    "reason": {"type": "string"},
}


def repeat_cache_extra(repeat: int) -> str:
    """Cache discriminator of the `repeat`-th judgment; the first one shares the plain entry."""
    return f"repeat:{repeat}" if repeat else ""


class LLMCorrectness(LLMJudgedMetric):
    """Claims-based correctness with an LLM judge (`answer_judge` = `llm:<model>`)."""

    label_key = "answer_judge"
    error_key = "answer_eval_error"
    spread_keys = ("answer_recall", "answer_precision", "answer_f1")
    cost_key = None

    def __init__(
        self,
        client: Judge,
        template: PromptTemplate,
        model: str,
        output_mode: str = "json_schema",
        temperature: float = 0.0,
    ):
        super().__init__(client, model, output_mode=output_mode, temperature=temperature)
        self.template = template
        self.response_format = response_format("answer_correctness", REPLY_PROPERTIES, output_mode)

    def applies(self, inputs: AnswerInputs) -> bool:
        return inputs.reference_answer is not None and inputs.actual_answer is not None

    async def judged_keys(self, inputs: AnswerInputs, repeat: int, usage: Usage) -> dict[str, Any]:
        problem = blank_input_error(inputs, reference=True)
        if problem:
            raise JudgeFailure(problem)
        assert inputs.actual_answer is not None
        references = [text for text in inputs.references() if text.strip()]
        counts = await gather_all(
            *(
                self._judge(inputs.question, reference, inputs.actual_answer, repeat, usage)
                for reference in references
            )
        )
        return max(counts, key=lambda claim_counts: claim_counts.f1).as_keys()  # the first of equals

    async def _judge(
        self, question: str, reference: str, actual: str, repeat: int, usage: Usage
    ) -> ClaimCounts:
        prompt = self.template.render(
            {"question": question, "reference_answer": reference, "actual_answer": actual}
        )
        return await self.ask(
            SYSTEM_MESSAGE,
            prompt,
            parse_claim_counts,
            usage,
            self.response_format,
            cache_key_extra=repeat_cache_extra(repeat),
        )
