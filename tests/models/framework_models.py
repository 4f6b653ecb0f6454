"""The framework-* rules' models (rules/framework-*.yaml, owners stream),
written from each rule file's comment over check_models.Kernel: they return
(estimate, low, high) as fractions of the kernel's time saved, before the
engine clamps them to 0..1 and widens the range to hold the estimate."""


def clamp(x, lo, hi):
    return min(hi, max(lo, x))


def cuda_graphs(k):
    """Launch cost against the kernel's duration: 5 us / (5 us + d), capped
    at 0.67; low a 2 us launch cost; high the 5 us share uncapped."""
    d = k.mean_ns
    share = 5000 / (5000 + d)
    return clamp(share, 0, 0.67), 2000 / (2000 + d), share


def nccl(k):
    """No model: the saving depends on the overlap other ranks allow."""
    return 0.0, 0.0, 0.0


def small_grid(k):
    """Idle SMs: with w < 1 waves, 1 - w of them idle; capped at 0.75; low
    half of it."""
    idle = clamp(1 - k.waves(), 0, 0.75)
    return idle, idle / 2, idle


def tf32(k):
    """Roofline at the kernel's intensity: the FMA pipe's share of the time
    shrinks by the FP32-to-TF32 peak ratio (TF32 at half the FP16 tensor
    peak), DRAM and L2 traffic stays.  Low: TF32 at half its peak; high:
    bf16, the FP16 tensor rate and half the bytes."""
    fma = k.m("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active") / 100
    glob = max(k.m("dram__throughput.avg.pct_of_peak_sustained_elapsed"),
               k.m("lts__t_sectors.avg.pct_of_peak_sustained_elapsed"),
               k.m("lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed")) / 100
    fp32, tensor = k.peaks["flops"][0], k.peaks["flops"][3]
    ratio = fp32 / (tensor / 2)
    now = max(fma, glob)
    return (1 - max(fma * ratio, glob) / now,
            1 - max(fma * 2 * ratio, glob) / now,
            1 - max(fma * ratio / 2, glob / 2) / now)


def torch_compile(k):
    """Bytes of intermediate tensors: the stored sectors over all global
    sectors, for the memory-bound share of the time; low half of it; high
    one input from the previous kernel too (twice the stores, at most
    all)."""
    ld = k.m("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
    st = k.m("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
    share = st / (ld + st)
    mem = k.mem()
    return mem / 100 * share, mem / 200 * share, mem / 100 * min(1, 2 * share)


def sdpa_math(k):
    """Roofline bound: the attention's FLOPs (FP32 and FP16 instructions
    plus the tensor pipe's work) at half the tensor peak in one fused
    kernel, against the math path's duration; low a quarter of the peak,
    high the full peak; caps 0.9 and 0.95."""
    flops = 0.0
    for p in ("f", "h"):
        flops += (k.m("sm__sass_thread_inst_executed_op_%sadd_pred_on.sum" % p)
                  + k.m("sm__sass_thread_inst_executed_op_%smul_pred_on.sum" % p)
                  + 2 * k.m("sm__sass_thread_inst_executed_op_%sfma_pred_on.sum" % p))
    tensor_peak = k.peaks["flops"][3]
    dur = max(k.mean_ns, 1)
    tensor = (k.m("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active") / 100
              * tensor_peak * dur / 1e9)
    fused = (flops + tensor) / tensor_peak * 1e9
    return (clamp(1 - 2 * fused / dur, 0, 0.9), clamp(1 - 4 * fused / dur, 0, 0.9),
            clamp(1 - fused / dur, 0, 0.95))


MODELS = {
    "framework-cuda-graphs": cuda_graphs,
    "framework-nccl": nccl,
    "framework-sdpa-math": sdpa_math,
    "framework-small-grid": small_grid,
    "framework-tf32": tf32,
    "framework-torch-compile": torch_compile,
}
