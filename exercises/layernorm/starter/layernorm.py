"""layernorm, torch track: LayerNorm and RMSNorm over the last dim, forward and backward.

Grade with:  quizzer exercise layernorm --check            (the torch track is the default)
README.md (next to this file) states the exact rules: shapes, dtypes, what is not allowed.
Part 1 is the two forward functions, part 2 the two backward functions.
"""

import torch


def layer_norm_forward(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """LayerNorm over the last dim of x [..., D]; weight and bias [D].

    Returns (y, mean, rstd): y = (x - mean) * rstd * weight + bias in x.dtype, shape of x;
    mean and rstd = 1 / sqrt(var + eps) (biased variance: divide by D) of shape x.shape[:-1],
    in float32 (float64 for float64 inputs). No torch layer_norm / var / std.
    """
    raise NotImplementedError("not implemented: layer_norm_forward")


def layer_norm_backward(
    dy: torch.Tensor,
    x: torch.Tensor,
    weight: torch.Tensor,
    mean: torch.Tensor,
    rstd: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Gradients of sum(dy * y) for layer_norm_forward, by hand (no autograd).

    dy and x [..., D]; mean and rstd as layer_norm_forward returned them. Returns
    (dx [..., D] in x.dtype, dweight [D], dbias [D] in weight.dtype), summed over all rows.
    """
    raise NotImplementedError("not implemented: layer_norm_backward")


def rms_norm_forward(
    x: torch.Tensor, weight: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """RMSNorm over the last dim: y = x * rstd * weight, rstd = 1 / sqrt(mean(x^2) + eps).

    Returns (y in x.dtype, rstd of shape x.shape[:-1] in float32, float64 for float64 x).
    """
    raise NotImplementedError("not implemented: rms_norm_forward")


def rms_norm_backward(
    dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Gradients of sum(dy * y) for rms_norm_forward, by hand: (dx in x.dtype, dweight [D])."""
    raise NotImplementedError("not implemented: rms_norm_backward")
