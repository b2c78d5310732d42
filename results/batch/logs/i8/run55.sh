#!/usr/bin/env bash
# Run 55: the peers at B = 1024 and our batch pipelines at B = 1024 (batch_i8_filter with them), one call.
. scripts/device_ab.sh run55 .carry/slim.tgz
peers '^batch(_auto)?/(batch_i8_filter/|batch_f16_filter/|batch_f16_h/|batch_tf32/)?batch:1024/'
