// The umbrella header, above every floor (framework, ops, models, optim, train): tensors,
// autograd, modules, gradcheck, graph pictures, op libraries, threads and CPU memory statistics,
// every built-in op, the ANDREA layers, the optimizers, clipping and schedules, and training
// (tokenizer, dataset, batches, the trainer, embedding similarity).
#pragma once

#include "minigraph/autograd.h"
#include "minigraph/backend.h"
#include "minigraph/cpu.h"
#include "minigraph/dist/communicator.h"
#include "minigraph/dist/gradient_reducer.h"
#include "minigraph/dist/mpi_communicator.h"
#include "minigraph/dist/nccl_communicator.h"
#include "minigraph/error.h"
#include "minigraph/format.h"
#include "minigraph/gradcheck.h"
#include "minigraph/graphviz.h"
#include "minigraph/models/andrea/model.h"
#include "minigraph/module.h"
#include "minigraph/op.h"
#include "minigraph/ops.h"
#include "minigraph/optim/adamw.h"
#include "minigraph/optim/clip.h"
#include "minigraph/optim/optimizer.h"
#include "minigraph/optim/schedule.h"
#include "minigraph/optim/sgd.h"
#include "minigraph/plugin.h"
#include "minigraph/tensor.h"
#include "minigraph/threads.h"
#include "minigraph/train/data/dataset.h"
#include "minigraph/train/data/tokenizer.h"
#include "minigraph/train/similarity.h"
#include "minigraph/train/trainer.h"
#include "minigraph/version.h"
