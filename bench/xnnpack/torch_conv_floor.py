"""ResNet-18's (or MobileNetV2's stem and 1x1) convolution layers in PyTorch
eager (oneDNN), 1 thread, timed like conv_floor.cpp (best of N, this
thread's CPU time), for comparison:

    ./torchlight exec python3 bench/xnnpack/torch_conv_floor.py [runs] [resnet18|mobilenet_v2]
"""

import sys
import time

import torch

# name, in_c, out_c, kernel, stride, pad, in_hw, count (as conv_floor.cpp)
RESNET18 = [
    ("conv1 7x7/2 3->64", 3, 64, 7, 2, 3, 224, 1),
    ("layer1 3x3 64->64", 64, 64, 3, 1, 1, 56, 4),
    ("layer2 3x3/2 64->128", 64, 128, 3, 2, 1, 56, 1),
    ("layer2 3x3 128->128", 128, 128, 3, 1, 1, 28, 3),
    ("layer2 1x1/2 64->128", 64, 128, 1, 2, 0, 56, 1),
    ("layer3 3x3/2 128->256", 128, 256, 3, 2, 1, 28, 1),
    ("layer3 3x3 256->256", 256, 256, 3, 1, 1, 14, 3),
    ("layer3 1x1/2 128->256", 128, 256, 1, 2, 0, 28, 1),
    ("layer4 3x3/2 256->512", 256, 512, 3, 2, 1, 14, 1),
    ("layer4 3x3 512->512", 512, 512, 3, 1, 1, 7, 3),
    ("layer4 1x1/2 256->512", 256, 512, 1, 2, 0, 14, 1),
]

MOBILENET_V2 = [
    ("stem 3x3/2 3->32", 3, 32, 3, 2, 1, 224, 1),
] + [(f"1x1 {cin}->{cout} @{hw}", cin, cout, 1, 1, 0, hw, count) for cin, cout, hw, count in [
    (32, 16, 112, 1), (16, 96, 112, 1), (96, 24, 56, 1), (24, 144, 56, 2), (144, 24, 56, 1),
    (144, 32, 28, 1), (32, 192, 28, 3), (192, 32, 28, 2), (192, 64, 14, 1), (64, 384, 14, 4),
    (384, 64, 14, 3), (384, 96, 14, 1), (96, 576, 14, 3), (576, 96, 14, 2), (576, 160, 7, 1),
    (160, 960, 7, 3), (960, 160, 7, 2), (960, 320, 7, 1), (320, 1280, 7, 1)]]


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    convs = {"resnet18": RESNET18, "mobilenet_v2": MOBILENET_V2}[
        sys.argv[2] if len(sys.argv) > 2 else "resnet18"]
    torch.set_num_threads(1)
    total_ms = total_gflop = 0.0
    print(f"{'layer':<24} {'count':>6} {'GFLOP':>10} {'ms(best)':>9} {'GFLOP/s':>8}")
    with torch.inference_mode():
        for name, cin, cout, k, stride, pad, hw, count in convs:
            conv = torch.nn.Conv2d(cin, cout, k, stride, pad).eval()
            x = torch.full((1, cin, hw, hw), 0.5)
            best = float("inf")
            for r in range(runs + 3):
                start = time.thread_time()
                conv(x)
                if r >= 3:
                    best = min(best, (time.thread_time() - start) * 1e3)
            out = (hw + 2 * pad - k) // stride + 1
            gflop = 2.0 * out * out * cout * cin * k * k * 1e-9
            print(f"{name:<24} {count:>6} {gflop * count:>10.3f} {best * count:>9.3f} "
                  f"{gflop / best * 1e3:>8.1f}")
            total_ms += best * count
            total_gflop += gflop * count
    print(f"\nall convolutions: {total_gflop:.3f} GFLOP in {total_ms:.2f} ms (best of {runs} "
          f"per layer, 1 thread, thread CPU time) = {total_gflop / total_ms * 1e3:.1f} GFLOP/s")


if __name__ == "__main__":
    main()
