"""DistributedDataParallel on npy in several processes: a launcher (`launch`) and what the ranks run (`workloads`)."""
