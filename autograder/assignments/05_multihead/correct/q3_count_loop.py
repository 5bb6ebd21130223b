# question: q3
# replaces: multi_count
# why: PyTorch's count added up in a loop over named_parameters
multi_count = 0
for name, p in multi.named_parameters():
    multi_count += p.numel()
print("PyTorch:", multi_count, "  by hand:", multi_params)
