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

package dev.idempotency.bench.store;

import java.util.Map;

import dev.idempotency.sample.bench.HttpBenchApplication;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.BeanDefinitionRegistryPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The HTTP benchmark application ({@link HttpBenchApplication}, every endpoint of it)
 * with the hand-written twins of the JDBC store's round trips ({@link StoreTwinController})
 * and, on MariaDB, the benchmark's tables in MariaDB's SQL. Compiled and started by
 * {@code run-http-ab.sh} (the knobs {@code AB_DB}, {@code AB_TWINS}); it is not part of
 * the sample's build.
 *
 * @author Idempotency contributors
 */
@Configuration(proxyBeanMethods = false)
@Import(StoreTwinController.class)
public class StoreTwinApplication {

	public static void main(String[] args) {
		SpringApplication application = new SpringApplication(HttpBenchApplication.class, StoreTwinApplication.class);
		application.setDefaultProperties(Map.of("spring.config.name", "httpbench"));
		application.run(args);
	}

	/**
	 * On MariaDB, the benchmark's own tables are created in MariaDB's SQL: the
	 * application's listener, written for PostgreSQL, is taken out.
	 * @return the post-processor
	 */
	@Bean
	static BeanDefinitionRegistryPostProcessor mariaDbBenchTables() {
		return new MariaDbTables();
	}

	@Bean
	ApplicationListener<ApplicationReadyEvent> mariaDbBenchTablesListener(JdbcTemplate jdbc, Environment environment) {
		return (event) -> {
			if (!StoreTwinController.isMariaDb(environment)) {
				return;
			}
			jdbc.execute("CREATE TABLE IF NOT EXISTS httpbench_payment (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,"
					+ " account VARCHAR(255) NOT NULL, amount BIGINT NOT NULL, currency VARCHAR(16) NOT NULL,"
					+ " reference VARCHAR(255) NOT NULL, created_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6))"
					+ " ENGINE=InnoDB");
			jdbc.execute("CREATE TABLE IF NOT EXISTS httpbench_raw_record (id VARCHAR(255) NOT NULL PRIMARY KEY,"
					+ " value BLOB NOT NULL, expires_at DATETIME(6) NOT NULL) ENGINE=InnoDB");
		};
	}

	static final class MariaDbTables implements BeanDefinitionRegistryPostProcessor, EnvironmentAware {

		private Environment environment;

		@Override
		public void setEnvironment(Environment environment) {
			this.environment = environment;
		}

		@Override
		public void postProcessBeanDefinitionRegistry(BeanDefinitionRegistry registry) {
			if (StoreTwinController.isMariaDb(this.environment) && registry.containsBeanDefinition("benchTables")) {
				registry.removeBeanDefinition("benchTables");
			}
		}

		@Override
		public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
		}

	}

}
