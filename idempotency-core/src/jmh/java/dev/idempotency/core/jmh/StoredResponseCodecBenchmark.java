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

import java.util.concurrent.TimeUnit;

import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.StoredResponseCodec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Cost of {@link StoredResponseCodec} encoding and decoding a typical JSON API response
 * (status, six headers and a 1 KiB or 64 KiB body).
 *
 * @author Idempotency contributors
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 4, time = 1)
@Fork(value = 2, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@State(Scope.Benchmark)
public class StoredResponseCodecBenchmark {

	@Param({ "1024", "65536" })
	int bodySize;

	private StoredResponseCodec codec;

	private StoredResponse response;

	private byte[] encoded;

	@Setup
	public void setUp() {
		this.codec = new StoredResponseCodec();
		this.response = BenchmarkData.response(this.bodySize);
		this.encoded = this.codec.encode(this.response);
		if (!this.codec.decode(this.encoded).equals(this.response)) {
			throw new IllegalStateException("Codec does not round-trip the benchmark response");
		}
	}

	@Benchmark
	public byte[] encode() {
		return this.codec.encode(this.response);
	}

	@Benchmark
	public StoredResponse decode() {
		return this.codec.decode(this.encoded);
	}

}
