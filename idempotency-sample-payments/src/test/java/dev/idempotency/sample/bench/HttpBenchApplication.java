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

package dev.idempotency.sample.bench;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Application of the HTTP benchmarks. One instance runs per store mode
 * ({@code idempotency.store.type} = {@code redis}, {@code tiered} or {@code jdbc}); each
 * holds every endpoint of {@link BenchController}, so a baseline and the
 * {@code @Idempotent} endpoint it is compared with always run in the same JVM.
 * <p>
 * Settings come from {@code httpbench.properties} (the sample's {@code application.yml}
 * is not read) and from the command line of {@code run-http-benchmarks.sh}.
 *
 * @author Idempotency contributors
 */
@SpringBootApplication
public class HttpBenchApplication {

	/**
	 * Value written by the hand-written Redis baselines: the size of a stored 201
	 * response with a small JSON body.
	 */
	static final byte[] STORED_VALUE = storedValue();

	public static void main(String[] args) {
		SpringApplication application = new SpringApplication(HttpBenchApplication.class);
		application.setDefaultProperties(java.util.Map.of("spring.config.name", "httpbench"));
		application.run(args);
	}

	@Bean
	ApplicationListener<ApplicationReadyEvent> benchTables(JdbcTemplate jdbc) {
		return (event) -> {
			jdbc.execute("CREATE TABLE IF NOT EXISTS httpbench_payment (id BIGSERIAL PRIMARY KEY,"
					+ " account TEXT NOT NULL, amount BIGINT NOT NULL, currency TEXT NOT NULL,"
					+ " reference TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now())");
			jdbc.execute("CREATE TABLE IF NOT EXISTS httpbench_raw_record (id TEXT PRIMARY KEY,"
					+ " value BYTEA NOT NULL, expires_at TIMESTAMPTZ NOT NULL)");
		};
	}

	/**
	 * The documented option of docs/stores/postgresql.md ("The CHECK constraints, and
	 * what they cost"): the store's table without its three {@code CHECK} constraints,
	 * applied after the store created it, when {@code httpbench.unchecked-table=true}.
	 * @param jdbc the application's database
	 * @param table the store's table
	 * @return the listener
	 */
	@Bean
	@ConditionalOnProperty("httpbench.unchecked-table")
	ApplicationListener<ApplicationReadyEvent> uncheckedTable(JdbcTemplate jdbc,
			@Value("${idempotency.jdbc.table-name}") String table) {
		return (event) -> jdbc.execute(
				"ALTER TABLE " + table + " DROP CONSTRAINT IF EXISTS " + table + "_id_check, DROP CONSTRAINT IF EXISTS "
						+ table + "_fingerprint_check, DROP CONSTRAINT IF EXISTS " + table + "_status_check");
	}

	private static byte[] storedValue() {
		byte[] value = new byte[200];
		Arrays.fill(value, (byte) 'x');
		byte[] json = "{\"id\":\"pay-1\",\"status\":\"ACCEPTED\"}".getBytes(StandardCharsets.US_ASCII);
		System.arraycopy(json, 0, value, 0, json.length);
		return value;
	}

}
