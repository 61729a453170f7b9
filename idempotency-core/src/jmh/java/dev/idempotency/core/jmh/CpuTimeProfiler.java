/*
 * Copyright 2026-present the original author or authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *      https://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */


package dev.idempotency.core.jmh;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.util.Collection;
import java.util.List;

import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * JMH profiler that reports the CPU time the benchmark JVM used per operation
 * ({@code cpu.time.norm}, in ns/op): the CPU time of all its threads (benchmark thread,
 * GC, compiler, and helper threads such as the engine's heartbeat scheduler) over the
 * iteration, divided by the operations of the iteration.
 * <p>
 * Unlike the score, which is wall-clock time, it does not grow when other processes take
 * the cores away from the benchmark, which makes it the better figure on a shared
 * machine. It counts everything the iteration runs, including {@code Level.Iteration}
 * setup. Use with {@code -prof dev.idempotency.core.jmh.CpuTimeProfiler}.
 *
 * @author Idempotency contributors
 */
public class CpuTimeProfiler implements InternalProfiler {

	private long start;

	@Override
	public String getDescription() {
		return "CPU time of the benchmark JVM per operation";
	}

	@Override
	public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
		this.start = processCpuTime();
	}

	@Override
	public Collection<? extends Result> afterIteration(BenchmarkParams benchmarkParams,
			IterationParams iterationParams, IterationResult result) {
		long used = processCpuTime() - this.start;
		long operations = result.getMetadata().getAllOps();
		double perOperation = (operations > 0 && used >= 0) ? (double) used / operations : Double.NaN;
		return List.of(new ScalarResult("cpu.time.norm", perOperation, "ns/op", AggregationPolicy.AVG));
	}

	private static long processCpuTime() {
		OperatingSystemMXBean bean = ManagementFactory.getOperatingSystemMXBean();
		if (bean instanceof com.sun.management.OperatingSystemMXBean os) {
			return os.getProcessCpuTime();
		}
		return -1;
	}

}
