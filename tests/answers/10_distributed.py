"""Answers for 10_distributed that the reference does not use, {grade_id: {set: source}}: what each set
must score is in CONTRIBUTING.md, "Files of a chapter"; a comment above an answer says what it gets wrong."""

ANSWERS = {
    "unwrap_state_dict": {
        # PyTorch's own helper, on a copy (it strips in place)
        "alternative": '''
from collections import OrderedDict
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present

def unwrap_state_dict(state_dict):
    copy = OrderedDict(state_dict)
    consume_prefix_in_state_dict_if_present(copy, "module.")
    return copy
''',
        # replaces every "module." in a key, also the one inside "submodule." or a submodule called "module"
        "wrong": '''
def unwrap_state_dict(state_dict):
    return {key.replace("module.", ""): value for key, value in state_dict.items()}
''',
        # strips the prefix in the dict it was given (and returns that dict): the caller's checkpoint changes
        "other_wrong": '''
def unwrap_state_dict(state_dict):
    for key in list(state_dict):
        if key.startswith("module."):
            state_dict[key[len("module."):]] = state_dict.pop(key)
    return state_dict
''',
        # removes the first "module." wherever it is: right for every visible key (each either starts
        # with the prefix or holds no "module." at all), wrong for an unwrapped key with one inside
        "overfit": '''
def unwrap_state_dict(state_dict):
    return {key.replace("module.", "", 1): value for key, value in state_dict.items()}
''',
        # moves every value to the CPU (a fix for the visible test's crash on a GPU machine, which
        # compared a CUDA checkpoint with a CPU model): a GPU checkpoint comes back on another device
        "more_wrong": '''
def unwrap_state_dict(state_dict):
    prefix = "module."
    return {(key[len(prefix):] if key.startswith(prefix) else key): value.cpu()
            for key, value in state_dict.items()}
''',
    },

    "shard_indices": {
        # a while loop over the copies of the sample, divmod for rank and position
        "alternative": '''
def find_sample(n, world_size, index):
    padded = (n + world_size - 1) // world_size * world_size
    found, place = [], index
    while place < padded:
        position, rank = divmod(place, world_size)
        found.append((rank, position))
        place += n
    found.sort()
    return found
''',
        # contiguous blocks instead of round-robin dealing
        "wrong": '''
def find_sample(n, world_size, index):
    per = math.ceil(n / world_size)
    return [(index // per, index % per)]
''',
        # round-robin without padding: every sample in one place only
        "other_wrong": '''
def find_sample(n, world_size, index):
    return [(index % world_size, index // world_size)]
''',
        # at most one copy from the padding, as 5 samples on 2 ranks need: wrong when the ranks
        # outnumber the samples twice over and the padding repeats a sample more than once
        "overfit": '''
def find_sample(n, world_size, index):
    padded = -(-n // world_size) * world_size
    found = [(index % world_size, index // world_size)]
    if index + n < padded:
        found.append(((index + n) % world_size, (index + n) // world_size))
    return sorted(found)
''',
        # the notebook's `shards` helper (a DistributedSampler for every rank) searched for the sample:
        # right for small data sets, but it builds the list of all n indices, which 10**12 samples
        # cannot fill
        "course_copy": '''
def find_sample(n, world_size, index):
    return sorted((rank, position) for rank, indices in enumerate(shards(n, world_size, shuffle=False))
                  for position, i in enumerate(indices) if i == index)
''',
    },

    "scale_for_ddp": {
        "alternative": '''
def scale_for_ddp(base_lr, per_gpu_batch, num_gpus):
    global_batch = int(per_gpu_batch * num_gpus)
    return (global_batch, float(base_lr) * global_batch / per_gpu_batch)
''',
        # forgets to scale the learning rate
        "wrong": '''
def scale_for_ddp(base_lr, per_gpu_batch, num_gpus):
    return per_gpu_batch * num_gpus, base_lr
''',
        # the learning rate multiplied by the global batch instead of by the number of GPUs
        "other_wrong": '''
def scale_for_ddp(base_lr, per_gpu_batch, num_gpus):
    global_batch = per_gpu_batch * num_gpus
    return global_batch, base_lr * global_batch
''',
        # the linear rule with the visible recipe's batch of 32 as the base batch
        "overfit": '''
def scale_for_ddp(base_lr, per_gpu_batch, num_gpus):
    global_batch = per_gpu_batch * num_gpus
    return global_batch, float(base_lr * global_batch / 32)
''',
    },

    "torchrun_commands": {
        # hyphenated flags, the meeting point as --rdzv_endpoint, another order
        "alternative": '''
def torchrun_commands(script, nnodes, gpus_per_node, master_addr, master_port):
    commands = []
    for node in range(nnodes):
        words = ["torchrun", "--node-rank", str(node), "--nnodes", str(nnodes),
                 "--nproc-per-node", str(gpus_per_node), f"--rdzv-endpoint={master_addr}:{master_port}", script]
        commands.append(" ".join(words))
    return commands
''',
        # --nproc_per_node set to the GPUs of the whole job instead of one machine's
        "wrong": '''
def torchrun_commands(script, nnodes, gpus_per_node, master_addr, master_port):
    total = nnodes * gpus_per_node
    return [f"torchrun --nnodes={nnodes} --nproc_per_node={total} --node_rank={node} "
            f"--master_addr={master_addr} --master_port={master_port} {script}" for node in range(nnodes)]
''',
        # --standalone kept from the one-machine command: every node becomes a job of its own
        "other_wrong": '''
def torchrun_commands(script, nnodes, gpus_per_node, master_addr, master_port):
    return [f"torchrun --standalone --nnodes={nnodes} --nproc_per_node={gpus_per_node} --node_rank={i} "
            f"--master_addr={master_addr} --master_port={master_port} {script}" for i in range(nnodes)]
''',
        # the port copied from the examples, 29500, which is also the visible test's: master_port is ignored
        "overfit": '''
def torchrun_commands(script, nnodes, gpus_per_node, master_addr, master_port):
    commands = []
    for rank in range(nnodes):
        commands.append(f"torchrun --nnodes {nnodes} --nproc_per_node {gpus_per_node} "
                        f"--node_rank {rank} --master_addr {master_addr} --master_port 29500 {script}")
    return commands
''',
    },

    "allreduce_ms": {
        "alternative": '''
def allreduce_ms(num_params, bandwidth_gb_per_s, num_gpus, bytes_per_value=4):
    gigabytes = num_params * bytes_per_value / 1e9
    ring = 2 * (num_gpus - 1) / num_gpus
    return float(gigabytes / bandwidth_gb_per_s * ring * 1e3)
''',
        # the time to move the data once, without the ring factor
        "wrong": '''
def allreduce_ms(num_params, bandwidth_gb_per_s, num_gpus, bytes_per_value=4):
    return 1000 * num_params * bytes_per_value / (bandwidth_gb_per_s * 1e9)
''',
        # the bandwidth read as gigabits per second: 8 times too slow
        "other_wrong": '''
def allreduce_ms(num_params, bandwidth_gb_per_s, num_gpus, bytes_per_value=4):
    bits = num_params * bytes_per_value * 8
    ring = 2 * (num_gpus - 1) / num_gpus
    return bits / (bandwidth_gb_per_s * 1e9) * ring * 1000
''',
        # the ring factor of the visible test's 4 GPUs, 2 * 3 / 4, for any number of GPUs
        "overfit": '''
def allreduce_ms(num_params, bandwidth_gb_per_s, num_gpus, bytes_per_value=4):
    once_ms = num_params * bytes_per_value / bandwidth_gb_per_s / 1e6
    return once_ms * 1.5
''',
    },

    "adamw_fp32_gb": {
        "alternative": '''
def adamw_fp32_gb(num_params):
    weights = grads = exp_avg = exp_avg_sq = 4 * num_params
    return (weights + grads + exp_avg + exp_avg_sq) / 1e9
''',
        # weights and gradients, no optimizer state
        "wrong": '''
def adamw_fp32_gb(num_params):
    return num_params * (4 + 4) / 1e9
''',
        # binary gigabytes (2**30 bytes), not the statement's 10**9
        "other_wrong": '''
def adamw_fp32_gb(num_params):
    return 16 * num_params / 2 ** 30
''',
        # whole billions of parameters, as in the visible 7B model: 350M parameters need 0 GB
        "overfit": '''
def adamw_fp32_gb(num_params):
    return float(int(num_params) // 10**9 * 16)
''',
    },

    "choose_strategy": {
        "alternative": '''
def choose_strategy(num_params, gpu_memory_gb):
    if adamw_fp32_gb(num_params) > gpu_memory_gb:
        return "FSDP"
    return "DDP"
''',
        # counts only the weights
        "wrong": '''
def choose_strategy(num_params, gpu_memory_gb):
    return "DDP" if 4 * num_params / 1e9 <= gpu_memory_gb else "FSDP"
''',
        # "fits" read as strictly less than the memory: a model that fills the GPU exactly goes to FSDP
        "other_wrong": '''
def choose_strategy(num_params, gpu_memory_gb):
    if 16 * num_params / 1e9 < gpu_memory_gb:
        return "DDP"
    return "FSDP"
''',
        # a threshold on the parameter count between the visible 350M and 7B: the GPU's memory is ignored
        "overfit": '''
def choose_strategy(num_params, gpu_memory_gb):
    return "FSDP" if num_params >= 1e9 else "DDP"
''',
    },

    "ddp_main": {
        # environment variables instead of get_rank, a sampler that asks the process group for
        # rank and world size, torch.save of a str path, the rank test via dist.get_rank()
        "alternative": '''
def ddp_main(out_dir, epochs=2, lr=0.5, batch_size=2, seed=123):
    import os
    out_dir = Path(out_dir)
    dist.init_process_group("gloo")
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    (X, y), _ = toy_data()
    dataset = ToyDataset(torch.cat([X, X + 0.05]), torch.cat([y, y]))  # 10 samples
    sampler = DistributedSampler(dataset, seed=seed)
    loader = DataLoader(dataset, batch_size, shuffle=False, sampler=sampler)
    torch.manual_seed(seed)
    net = NeuralNetwork(2, 2)
    model = DDP(net, device_ids=None)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    seen = []
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        seen.append([int(i) for i in sampler])
        for features, labels in loader:
            loss = F.cross_entropy(model(features), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    report = {"rank": rank, "seen": seen, "params": params_hash(model.module)}
    (out_dir / f"rank{rank}.json").write_text(json.dumps(report))
    if dist.get_rank() == 0:
        torch.save(net.state_dict(), str(out_dir / "model.pt"))
    dist.barrier()
    dist.destroy_process_group()
''',
        # never wraps the model in DDP: the replicas train apart
        "wrong": '''
def ddp_main(out_dir, epochs=2, lr=0.5, batch_size=2, seed=123):
    out_dir = Path(out_dir)
    dist.init_process_group(backend="gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    (X, y), _ = toy_data()
    dataset = ToyDataset(torch.cat([X, X + 0.05]), torch.cat([y, y]))  # 10 samples
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=seed)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler)
    torch.manual_seed(seed)
    model = NeuralNetwork(2, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    seen = []
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        seen.append([int(i) for i in sampler])
        for features, labels in loader:
            loss = F.cross_entropy(model(features), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    report = {"rank": rank, "seen": seen, "params": params_hash(model)}
    (out_dir / f"rank{rank}.json").write_text(json.dumps(report))
    if rank == 0:
        torch.save(model.state_dict(), out_dir / "model.pt")
    dist.barrier()
    dist.destroy_process_group()
''',
        # no sampler.set_epoch: every epoch repeats the first epoch's order
        "other_wrong": '''
def ddp_main(out_dir, epochs=2, lr=0.5, batch_size=2, seed=123):
    out_dir = Path(out_dir)
    dist.init_process_group(backend="gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    (X, y), _ = toy_data()
    dataset = ToyDataset(torch.cat([X, X + 0.05]), torch.cat([y, y]))  # 10 samples
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=seed)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler)
    torch.manual_seed(seed)
    model = DDP(NeuralNetwork(2, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    seen = []
    for epoch in range(epochs):
        seen.append([int(i) for i in sampler])
        for features, labels in loader:
            loss = F.cross_entropy(model(features), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    report = {"rank": rank, "seen": seen, "params": params_hash(model.module)}
    (out_dir / f"rank{rank}.json").write_text(json.dumps(report))
    if rank == 0:
        torch.save(model.module.state_dict(), out_dir / "model.pt")
    dist.barrier()
    dist.destroy_process_group()
''',
        # what the visible asserts look at and no more: disjoint shards (the sampler's default seed,
        # not `seed`) and a file called model.pt (the wrapper's state dict, keys with "module.")
        "overfit": '''
def ddp_main(out_dir, epochs=2, lr=0.5, batch_size=2, seed=123):
    out_dir = Path(out_dir)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    (X, y), _ = toy_data()
    dataset = ToyDataset(torch.cat([X, X + 0.05]), torch.cat([y, y]))  # 10 samples
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler)
    torch.manual_seed(seed)
    model = DDP(NeuralNetwork(2, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    seen = []
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        seen.append([int(i) for i in sampler])
        for features, labels in loader:
            loss = F.cross_entropy(model(features), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    report = {"rank": rank, "seen": seen, "params": params_hash(model.module)}
    (out_dir / f"rank{rank}.json").write_text(json.dumps(report))
    if rank == 0:
        torch.save(model.state_dict(), out_dir / "model.pt")
    dist.barrier()
    dist.destroy_process_group()
''',
    },
}
