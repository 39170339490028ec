"""Transformers — text generation (huggingface/transformers, Apache License 2.0):
src/transformers/generation/logits_process.py, src/transformers/generation/stopping_criteria.py,
src/transformers/pytorch_utils.py and the greedy step of src/transformers/generation/utils.py.

The logits processors and stopping criteria are callables whose `__call__(input_ids, scores)`
is the inference code; each is rewritten as an annotated top-level function whose
constructor arguments (`temperature`, `top_k`, `top_p`, `filter_value`,
`min_tokens_to_keep`, `penalty`, the `eos_token_id` / `suppress_tokens` tensors, the `epsilon`
tensor of the eta warper) are parameters. `isin_mps_friendly` is kept as the helper the
processors call, with its mps branch (never taken on CPU). Everything else is kept as the
project writes it.
"""

import math

import torch

from torchlower.types import (
    TensorBoolCpu1D,
    TensorF32Cpu0D,
    TensorF32Cpu2D,
    TensorI64Cpu1D,
    TensorI64Cpu2D,
)


# Transformers — src/transformers/pytorch_utils.py, isin_mps_friendly (huggingface/transformers)
def isin_mps_friendly(elements: TensorI64Cpu1D, test_elements: TensorI64Cpu1D) -> TensorBoolCpu1D:
    """
    Same as `torch.isin` without flags, but MPS-friendly. We can remove this function when we stop supporting
    torch <= 2.3. See https://github.com/pytorch/pytorch/issues/77764#issuecomment-2067838075
    """
    if elements.device.type == "mps":
        test_elements = test_elements.to(elements.device)
        return elements.tile(test_elements.shape[0], 1).eq(test_elements.unsqueeze(1)).sum(dim=0).bool().squeeze()
    else:
        # Note: don't use named arguments in `torch.isin`, see https://github.com/pytorch/pytorch/issues/126045
        return torch.isin(elements, test_elements)


# Transformers — generation/logits_process.py, TemperatureLogitsWarper.__call__ (huggingface/transformers)
def temperature_warper(input_ids: TensorI64Cpu2D, scores: TensorF32Cpu2D, temperature: float) -> TensorF32Cpu2D:
    scores_processed = scores / temperature
    return scores_processed


# Transformers — generation/logits_process.py, RepetitionPenaltyLogitsProcessor.__call__ (huggingface/transformers)
def repetition_penalty_processor(input_ids: TensorI64Cpu2D, scores: TensorF32Cpu2D, penalty: float) -> TensorF32Cpu2D:
    score = torch.gather(scores, 1, input_ids)

    # if score < 0 then repetition penalty has to be multiplied to reduce the token probabilities
    score = torch.where(score < 0, score * penalty, score / penalty)

    scores_processed = scores.scatter(1, input_ids, score)
    return scores_processed


# Transformers — generation/logits_process.py, TopKLogitsWarper.__call__ (huggingface/transformers)
def top_k_warper(
    input_ids: TensorI64Cpu2D, scores: TensorF32Cpu2D, top_k: int, filter_value: float = -float("Inf")
) -> TensorF32Cpu2D:
    top_k = min(top_k, scores.size(-1))  # Safety check
    # Remove all tokens with a probability less than the last token of the top-k
    indices_to_remove = scores < torch.topk(scores, top_k)[0][..., -1, None]
    scores_processed = scores.masked_fill(indices_to_remove, filter_value)
    return scores_processed


# Transformers — generation/logits_process.py, TopPLogitsWarper.__call__ (huggingface/transformers)
def top_p_warper(
    input_ids: TensorI64Cpu2D, scores: TensorF32Cpu2D, top_p: float, filter_value: float = -float("Inf"), min_tokens_to_keep: int = 1
) -> TensorF32Cpu2D:
    sorted_logits, sorted_indices = torch.sort(scores, descending=False)
    cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)

    # Remove tokens with cumulative top_p above the threshold (token with 0 are kept)
    sorted_indices_to_remove = cumulative_probs <= (1 - top_p)
    # Keep at least min_tokens_to_keep
    sorted_indices_to_remove[..., -min_tokens_to_keep:] = 0

    # scatter sorted tensors to original indexing
    indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove)
    scores_processed = scores.masked_fill(indices_to_remove, filter_value)
    return scores_processed


# Transformers — generation/logits_process.py, MinPLogitsWarper.__call__ (huggingface/transformers)
def min_p_warper(
    input_ids: TensorI64Cpu2D, scores: TensorF32Cpu2D, min_p: float, filter_value: float = -float("Inf"), min_tokens_to_keep: int = 1
) -> TensorF32Cpu2D:
    # Convert logits to probabilities
    probs = torch.softmax(scores, dim=-1)
    # Get the probability of the top token for each sequence in the batch
    top_probs = probs.amax(dim=-1, keepdim=True)
    # Calculate the actual min_p threshold by scaling min_p with the top token's probability
    scaled_min_p = min_p * top_probs
    # Create a mask for tokens that have a probability less than the scaled min_p
    tokens_to_remove = probs < scaled_min_p

    sorted_indices = torch.argsort(scores, descending=True, dim=-1)
    sorted_indices_to_remove = torch.gather(tokens_to_remove, dim=-1, index=sorted_indices)
    # Keep at least min_tokens_to_keep
    sorted_indices_to_remove[..., :min_tokens_to_keep] = False

    indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove)
    scores_processed = scores.masked_fill(indices_to_remove, filter_value)
    return scores_processed


# Transformers — generation/logits_process.py, TypicalLogitsWarper.__call__ (huggingface/transformers)
def typical_warper(
    input_ids: TensorI64Cpu2D, scores: TensorF32Cpu2D, mass: float = 0.9, filter_value: float = -float("Inf"), min_tokens_to_keep: int = 1
) -> TensorF32Cpu2D:
    # calculate entropy
    normalized = torch.nn.functional.log_softmax(scores, dim=-1)
    p = torch.exp(normalized)
    ent = -(normalized * p).nansum(-1, keepdim=True)

    # shift and sort
    shifted_scores = torch.abs((-normalized) - ent)
    sorted_scores, sorted_indices = torch.sort(shifted_scores, descending=False)
    sorted_logits = scores.gather(-1, sorted_indices)
    cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)

    # Remove tokens with cumulative mass above the threshold
    last_ind = (cumulative_probs < mass).sum(dim=1)
    last_ind.clamp_(max=sorted_scores.shape[-1] - 1)
    sorted_indices_to_remove = sorted_scores > sorted_scores.gather(1, last_ind.view(-1, 1))
    sorted_indices_to_remove[..., :min_tokens_to_keep] = 0
    indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove)

    scores_processed = scores.masked_fill(indices_to_remove, filter_value)
    return scores_processed


# Transformers — generation/logits_process.py, EpsilonLogitsWarper.__call__ (huggingface/transformers)
def epsilon_warper(
    input_ids: TensorI64Cpu2D, scores: TensorF32Cpu2D, epsilon: float, filter_value: float = -float("Inf"), min_tokens_to_keep: int = 1
) -> TensorF32Cpu2D:
    probabilities = scores.softmax(dim=-1)
    indices_to_remove = probabilities < epsilon

    # Keep the words with the 'min_tokens_to_keep'-highest probabilities
    top_k = min(min_tokens_to_keep, scores.size(-1))  # Safety check
    indices_to_remove = indices_to_remove & (scores < torch.topk(scores, top_k)[0][..., -1, None])

    scores_processed = scores.masked_fill(indices_to_remove, filter_value)
    return scores_processed


# Transformers — generation/logits_process.py, EtaLogitsWarper.__call__ (huggingface/transformers)
def eta_warper(
    input_ids: TensorI64Cpu2D, scores: TensorF32Cpu2D, epsilon: TensorF32Cpu0D, filter_value: float = -float("Inf"), min_tokens_to_keep: int = 1
) -> TensorF32Cpu2D:
    # self.epsilon = torch.tensor(epsilon, device=device)
    probabilities = scores.softmax(dim=-1)
    entropy = torch.distributions.Categorical(logits=scores).entropy()
    eta = torch.min(epsilon, torch.sqrt(epsilon) * torch.exp(-entropy))[..., None]
    indices_to_remove = probabilities < eta

    # Keep the words with the 'min_tokens_to_keep'-highest probabilities
    top_k = min(min_tokens_to_keep, scores.size(-1))  # Safety check
    indices_to_remove = indices_to_remove & (scores < torch.topk(scores, top_k)[0][..., -1, None])

    scores_processed = scores.masked_fill(indices_to_remove, filter_value)
    return scores_processed


# Transformers — generation/logits_process.py, MinLengthLogitsProcessor.__call__ (huggingface/transformers)
def min_length_processor(
    input_ids: TensorI64Cpu2D, scores: TensorF32Cpu2D, min_length: int, eos_token_id: TensorI64Cpu1D
) -> TensorF32Cpu2D:
    vocab_tensor = torch.arange(scores.shape[-1], device=scores.device)
    eos_token_mask = isin_mps_friendly(vocab_tensor, eos_token_id)
    scores_processed = scores.clone()
    if input_ids.shape[-1] < min_length:
        scores_processed = torch.where(eos_token_mask, -math.inf, scores)
    return scores_processed


# Transformers — generation/logits_process.py, SuppressTokensLogitsProcessor.__call__ (huggingface/transformers)
def suppress_tokens_processor(input_ids: TensorI64Cpu2D, scores: TensorF32Cpu2D, suppress_tokens: TensorI64Cpu1D) -> TensorF32Cpu2D:
    vocab_tensor = torch.arange(scores.shape[-1], device=scores.device)
    suppress_token_mask = isin_mps_friendly(vocab_tensor, suppress_tokens)
    scores = torch.where(suppress_token_mask, -float("inf"), scores)
    return scores


# Transformers — generation/stopping_criteria.py, MaxLengthCriteria.__call__ (huggingface/transformers)
def max_length_criteria(input_ids: TensorI64Cpu2D, scores: TensorF32Cpu2D, max_length: int) -> TensorBoolCpu1D:
    cur_len = input_ids.shape[-1]
    is_done = cur_len >= max_length
    return torch.full((input_ids.shape[0],), is_done, device=input_ids.device, dtype=torch.bool)


# Transformers — generation/stopping_criteria.py, EosTokenCriteria.__call__ (huggingface/transformers)
def eos_token_criteria(input_ids: TensorI64Cpu2D, scores: TensorF32Cpu2D, eos_token_id: TensorI64Cpu1D) -> TensorBoolCpu1D:
    is_done = isin_mps_friendly(input_ids[:, -1], eos_token_id)
    return is_done


# Transformers — generation/utils.py, GenerationMixin._sample, one greedy step after the forward pass (huggingface/transformers)
def greedy_step(
    input_ids: TensorI64Cpu2D,
    next_token_logits: TensorF32Cpu2D,
    unfinished_sequences: TensorI64Cpu1D,
    eos_token_id: TensorI64Cpu1D,
    pad_token_id: int,
    temperature: float,
    top_k: int,
) -> tuple[TensorI64Cpu2D, TensorI64Cpu1D]:
    # logits_processor = [TemperatureLogitsWarper, TopKLogitsWarper]; stopping_criteria = [EosTokenCriteria]
    next_token_scores = top_k_warper(input_ids, temperature_warper(input_ids, next_token_logits, temperature), top_k)
    next_tokens = torch.argmax(next_token_scores, dim=-1)

    # finished sentences should have their next token be a padding token
    next_tokens = next_tokens * unfinished_sequences + pad_token_id * (1 - unfinished_sequences)

    # update generated ids, model inputs, and length for next step
    input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
    unfinished_sequences = unfinished_sequences & ~eos_token_criteria(input_ids, next_token_scores, eos_token_id)
    return input_ids, unfinished_sequences


_ids = lambda: torch.randint(0, 12, (3, 5))


INPUTS = {
    "isin_mps_friendly": lambda: (torch.arange(12), torch.tensor([3, 7])),
    "temperature_warper": lambda: (_ids(), torch.randn(3, 12), 0.7),
    "repetition_penalty_processor": lambda: (_ids(), torch.randn(3, 12), 1.3),
    "top_k_warper": lambda: (_ids(), torch.randn(3, 12), 4),
    "top_p_warper": lambda: (_ids(), torch.randn(3, 12), 0.8),
    "min_p_warper": lambda: (_ids(), torch.randn(3, 12), 0.1),
    "typical_warper": lambda: (_ids(), torch.randn(3, 12), 0.9),
    "epsilon_warper": lambda: (_ids(), torch.randn(3, 12), 0.05),
    "eta_warper": lambda: (_ids(), torch.randn(3, 12), torch.tensor(0.05)),
    "min_length_processor": lambda: (_ids(), torch.randn(3, 12), 8, torch.tensor([2, 9])),
    "suppress_tokens_processor": lambda: (_ids(), torch.randn(3, 12), torch.tensor([0, 5])),
    "max_length_criteria": lambda: (_ids(), torch.randn(3, 12), 5),
    "eos_token_criteria": lambda: (_ids(), torch.randn(3, 12), torch.tensor([2, 9])),
    "greedy_step": lambda: (_ids(), torch.randn(3, 12), torch.tensor([1, 0, 1]), torch.tensor([2, 9]), 0, 0.7, 4),
}
